//! An image's width and height from its header bytes (PNG, JPEG, GIF, WebP): what the
//! providers' image-token rules need, without decoding the image.

/// `(width, height)` in pixels, or `None` for another format or a header cut short.
pub fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        // IHDR is the first chunk: width and height big-endian after its length and name.
        return Some((be32(bytes.get(16..20)?), be32(bytes.get(20..24)?)));
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Some((le16(bytes.get(6..8)?), le16(bytes.get(8..10)?)));
    }
    if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        return webp(bytes);
    }
    if bytes.starts_with(&[0xFF, 0xD8]) {
        return jpeg(bytes);
    }
    None
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn le16(b: &[u8]) -> u32 {
    u32::from(u16::from_le_bytes([b[0], b[1]]))
}

fn le24(b: &[u8]) -> u32 {
    u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16
}

fn webp(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        // Lossy: the frame header's 14-bit sizes after the start code.
        b"VP8 " => Some((le16(b.get(26..28)?) & 0x3FFF, le16(b.get(28..30)?) & 0x3FFF)),
        // Lossless: 14-bit sizes minus one, packed after the signature byte.
        b"VP8L" => {
            let p = b.get(21..25)?;
            let bits = u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        // Extended: 24-bit canvas sizes minus one.
        b"VP8X" => Some((le24(b.get(24..27)?) + 1, le24(b.get(27..30)?) + 1)),
        _ => None,
    }
}

/// The first start-of-frame segment's size; the segments before it are skipped by length.
fn jpeg(b: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    loop {
        // Fill bytes (0xFF) may pad before a marker.
        while *b.get(i)? == 0xFF && *b.get(i + 1)? == 0xFF {
            i += 1;
        }
        if *b.get(i)? != 0xFF {
            return None;
        }
        let marker = *b.get(i + 1)?;
        if matches!(marker, 0xD0..=0xD9 | 0x01) {
            i += 2;
            continue;
        }
        let len = usize::from(u16::from_be_bytes([*b.get(i + 2)?, *b.get(i + 3)?]));
        // SOF0-SOF15 but DHT (C4), JPG (C8) and DAC (CC).
        if (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            let h = u32::from(u16::from_be_bytes([*b.get(i + 5)?, *b.get(i + 6)?]));
            let w = u32::from(u16::from_be_bytes([*b.get(i + 7)?, *b.get(i + 8)?]));
            return Some((w, h));
        }
        i += 2 + len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_header() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend(1024u32.to_be_bytes());
        png.extend(768u32.to_be_bytes());
        assert_eq!(dimensions(&png), Some((1024, 768)));
        assert_eq!(dimensions(b"GIF89a\x40\x01\xf0\x00rest"), Some((320, 240)));
        // A JPEG with an APP0 segment before its SOF2.
        let jpeg = [0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0, 0xFF, 0xC2, 0, 11, 8, 0x01, 0xE0, 0x02, 0x80, 3];
        assert_eq!(dimensions(&jpeg), Some((640, 480)));
        let mut vp8x = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
        vp8x.extend([0x1F, 0x03, 0x00, 0x57, 0x02, 0x00]); // 800 x 600, each minus one
        assert_eq!(dimensions(&vp8x), Some((800, 600)));
        let mut vp8l = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f".to_vec();
        let bits: u32 = 99 | (49 << 14); // 100 x 50, each minus one
        vp8l.extend(bits.to_le_bytes());
        assert_eq!(dimensions(&vp8l), Some((100, 50)));
        let mut vp8 = b"RIFF\0\0\0\0WEBPVP8 \0\0\0\0\0\0\0\x9d\x01\x2a".to_vec();
        vp8.extend([0x80, 0x02, 0xE0, 0x01]); // 640 x 480
        assert_eq!(dimensions(&vp8), Some((640, 480)));
        assert_eq!(dimensions(b"\x89PNG\r\n\x1a\n\0\0"), None, "cut short");
        assert_eq!(dimensions(b"<svg/>"), None);
    }
}
