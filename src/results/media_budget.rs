//! What an image costs in `results.maxTokens`, by the reader's provider's published rule, and
//! the images of one output kept within the budget.
//!
//! - Anthropic: `width * height / 750` tokens, after an image whose long edge is over 1568 px
//!   is scaled down to it (so at most about 1,600).
//! - OpenAI (high detail): scaled to fit 2048 x 2048, then its short side to 768 px; then
//!   85 tokens plus 170 per 512 px tile.
//! Another reader (or none) has no rule we can apply: its images are not counted.

use crate::media::size::dimensions;
use crate::media::Reader;
use crate::output::{ModelOutput, Part};

/// Tokens left for the text of a result whose images are kept: the room its text and the
/// note of a cut need.
pub const TEXT_ROOM: u32 = super::MIN_TOKENS;

/// An image's tokens for `reader`, from its base64 `data`; `None` without a rule or a readable
/// header.
pub fn image_tokens(reader: Reader, data: &str) -> Option<u64> {
    if !matches!(reader, Reader::Anthropic | Reader::Openai) {
        return None;
    }
    let bytes = header_bytes(data)?;
    let (w, h) = dimensions(&bytes)?;
    let (w, h) = (f64::from(w.max(1)), f64::from(h.max(1)));
    Some(match reader {
        Reader::Anthropic => {
            let scale = (1568.0 / w.max(h)).min(1.0);
            ((w * scale) * (h * scale) / 750.0).ceil() as u64
        }
        _ => {
            let fit = (2048.0 / w.max(h)).min(1.0);
            let (w, h) = (w * fit, h * fit);
            let short = (768.0 / w.min(h)).min(1.0);
            let (w, h) = (w * short, h * short);
            85 + 170 * ((w / 512.0).ceil() * (h / 512.0).ceil()) as u64
        }
    })
}

/// The decoded start of a base64 image: enough for any header but a JPEG's, which may follow
/// large metadata segments (then all of it is decoded; a media part is at most 5 MB).
fn header_bytes(data: &str) -> Option<Vec<u8>> {
    let data = data.trim().as_bytes();
    let take = if data.starts_with(b"/9j/") { data.len() } else { data.len().min(1024) };
    data_encoding::BASE64.decode(&data[..take - take % 4]).ok()
}

/// Keeps `output`'s images in order while their tokens fit `max_tokens` less `TEXT_ROOM`; the
/// rest become placeholders that say so. Returns the output and the tokens its images take.
pub fn fit(output: ModelOutput, reader: Reader, max_tokens: u32) -> (ModelOutput, u64) {
    let ModelOutput::Content(parts) = output else { return (output, 0) };
    let room = u64::from(max_tokens.saturating_sub(TEXT_ROOM));
    let mut used = 0u64;
    let parts: Vec<Part> = parts
        .into_iter()
        .map(|p| match &p {
            Part::ImageData { data, .. } => match image_tokens(reader, data) {
                Some(t) if used + t > room => p.placeholder(Some(&format!("its {t} tokens are over the result budget (results.maxTokens {max_tokens})"))),
                Some(t) => {
                    used += t;
                    p
                }
                None => p,
            },
            _ => p,
        })
        .collect();
    (ModelOutput::of_parts(parts), used)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> String {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(w.to_be_bytes());
        b.extend(h.to_be_bytes());
        b.extend([8, 6, 0, 0, 0]);
        data_encoding::BASE64.encode(&b)
    }

    #[test]
    fn published_rules() {
        assert_eq!(image_tokens(Reader::Anthropic, &png(1000, 1000)), Some(1334));
        assert_eq!(image_tokens(Reader::Anthropic, &png(200, 150)), Some(40));
        // 3000 x 1500 -> 1568 x 784 -> 1640 tokens.
        assert_eq!(image_tokens(Reader::Anthropic, &png(3000, 1500)), Some(1640));
        // 1000 x 1000 -> 768 x 768: 4 tiles.
        assert_eq!(image_tokens(Reader::Openai, &png(1000, 1000)), Some(85 + 170 * 4));
        // 4096 x 2048 -> 2048 x 1024 -> 1536 x 768: 3 x 2 tiles.
        assert_eq!(image_tokens(Reader::Openai, &png(4096, 2048)), Some(85 + 170 * 6));
        assert_eq!(image_tokens(Reader::Openai, &png(100, 100)), Some(255));
        assert_eq!(image_tokens(Reader::Other, &png(100, 100)), None);
        assert_eq!(image_tokens(Reader::Openai, "bm90IGFuIGltYWdl"), None);
    }

    #[test]
    fn images_kept_while_they_fit() {
        let img = |w| Part::ImageData { data: png(w, w), media_type: "image/png".into() };
        let out = ModelOutput::Content(vec![Part::Text { text: "two shots".into() }, img(1000), img(100)]);
        let (kept, used) = fit(out.clone(), Reader::Openai, 1_000);
        assert_eq!(used, 765, "the second (255) does not fit beside the first");
        let ModelOutput::Content(parts) = kept else { panic!() };
        assert!(parts[1].is_media());
        assert!(parts[2].text().unwrap().contains("its 255 tokens are over the result budget"), "{parts:?}");
        let (all_text, used) = fit(out, Reader::Anthropic, 1_000);
        assert_eq!(used, 14, "the big one is named, the small one kept");
        assert!(matches!(all_text, ModelOutput::Content(_)));
    }
}
