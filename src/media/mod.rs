//! Images and audio the model can see (issue 52): which media parts of a tool result go to the
//! model as media, which stay placeholders and why, what an image costs in the result budget,
//! and how a natively rendered plan's provider takes them.
//!
//! The policy (`Media`) is per call: the host's `results.media` (`model` by default, or
//! `placeholder`) and who reads the result (`Reader`: the plan's rendering, else its model).
//! A part over `MAX_PART_BYTES` stays a placeholder, as does audio for a reader not known to
//! take it in a tool result (Anthropic and OpenAI take none; nor does a call with no model), and
//! an image of a type a native provider does not take. Knows no JSON-RPC.

pub mod size;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The largest media part sent to the model, in bytes: what Anthropic accepts per image, and
/// OpenAI far more; larger ones are named, not sent.
pub const MAX_PART_BYTES: usize = 5 * 1024 * 1024;

/// What the model gets of a tool result's images and audio (`results.media`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MediaMode {
    /// As media parts (`output: {type: "content"}`), within the rules of the reader.
    #[default]
    Model,
    /// As text placeholders naming their type and size (before protocol 0.3).
    Placeholder,
}

/// A media part's kind, by its MIME type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Image,
    Audio,
}

impl Kind {
    pub fn of(mime: &str) -> Option<Kind> {
        let top = mime.split('/').next().unwrap_or("").trim().to_ascii_lowercase();
        match top.as_str() {
            "image" => Some(Kind::Image),
            "audio" => Some(Kind::Audio),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Image => "image",
            Kind::Audio => "audio",
        }
    }
}

/// Who reads a call's result, as far as media go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reader {
    /// An Anthropic rendering or a Claude model.
    Anthropic,
    /// An OpenAI rendering or an OpenAI model.
    Openai,
    /// Another provider's model.
    Other,
    /// No plan, or a plan that names no model.
    #[default]
    Unknown,
}

impl Reader {
    /// The reader of a call under a plan for `model` that is not natively rendered
    /// (`Rendering::reader` says a native plan's).
    pub fn of_model(model: Option<&str>) -> Reader {
        let Some(model) = model.map(|m| m.rsplit('/').next().unwrap_or(m).to_ascii_lowercase()) else { return Reader::Unknown };
        if model.is_empty() {
            Reader::Unknown
        } else if model.starts_with("claude") {
            Reader::Anthropic
        } else if ["gpt-", "chatgpt", "o1", "o3", "o4", "computer-use"].iter().any(|p| model.starts_with(p)) {
            Reader::Openai
        } else {
            Reader::Other
        }
    }

    fn provider(self) -> &'static str {
        match self {
            Reader::Anthropic => "Anthropic",
            Reader::Openai => "OpenAI",
            Reader::Other | Reader::Unknown => "the model",
        }
    }
}

/// Image types Anthropic's and OpenAI's APIs take.
const NATIVE_IMAGES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// One call's media policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Media {
    pub mode: MediaMode,
    pub reader: Reader,
}

impl Media {
    /// Whether a part of `kind`, `mime` and `bytes` stays a placeholder: `None` when it goes as
    /// media, `Some(None)` for the placeholder mode (today's text), `Some(Some(why))` otherwise.
    pub fn refuse(&self, kind: Kind, mime: &str, bytes: usize) -> Option<Option<String>> {
        if self.mode == MediaMode::Placeholder {
            return Some(None);
        }
        if bytes > MAX_PART_BYTES {
            return Some(Some(format!("over the {} MB a media part may be", MAX_PART_BYTES >> 20)));
        }
        let native = matches!(self.reader, Reader::Anthropic | Reader::Openai);
        match kind {
            Kind::Audio if native => Some(Some(format!("{} takes no audio in a tool result", self.reader.provider()))),
            Kind::Audio if self.reader == Reader::Unknown => Some(Some("the call's plan names no model that takes audio".into())),
            Kind::Image if native && !NATIVE_IMAGES.contains(&mime.to_ascii_lowercase().as_str()) => {
                Some(Some(format!("{} takes PNG, JPEG, GIF and WebP images only", self.reader.provider())))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_by_rendering_then_model() {
        assert_eq!(Reader::of_model(Some("anthropic/claude-sonnet-4-5")), Reader::Anthropic);
        assert_eq!(Reader::of_model(Some("openai/gpt-4.1")), Reader::Openai);
        assert_eq!(Reader::of_model(Some("gemini-2.5-pro")), Reader::Other);
        assert_eq!(Reader::of_model(None), Reader::Unknown);
    }

    #[test]
    fn what_stays_a_placeholder() {
        let media = |reader| Media { mode: MediaMode::Model, reader };
        assert_eq!(media(Reader::Unknown).refuse(Kind::Image, "image/png", 10), None);
        assert_eq!(media(Reader::Other).refuse(Kind::Audio, "audio/wav", 10), None);
        assert!(media(Reader::Anthropic).refuse(Kind::Audio, "audio/wav", 10).unwrap().unwrap().contains("Anthropic takes no audio"));
        assert!(media(Reader::Unknown).refuse(Kind::Audio, "audio/wav", 10).unwrap().unwrap().contains("no model"));
        assert!(media(Reader::Other).refuse(Kind::Image, "image/png", MAX_PART_BYTES + 1).unwrap().unwrap().contains("5 MB"));
        assert!(media(Reader::Openai).refuse(Kind::Image, "image/svg+xml", 10).is_some());
        assert_eq!(Media { mode: MediaMode::Placeholder, reader: Reader::Other }.refuse(Kind::Image, "image/png", 10), Some(None));
    }
}
