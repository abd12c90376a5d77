//! `Content-Length` framing, as LSP does it.
//!
//! The decoder never fails the stream: a bad header block or an oversized frame becomes a
//! `Frame` variant the server answers, and decoding goes on with the next frame. An oversized
//! body is skipped as it arrives and is never buffered whole.

use bytes::{Buf, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

/// A header block longer than this without its blank line is garbage, not a header.
const MAX_HEADER_BYTES: usize = 8 * 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete body (expected to be one JSON value; not checked here).
    Message(Bytes),
    /// The header announced more bytes than the cap; the body is being skipped.
    TooLarge { length: usize, max: usize },
    /// The header block could not be read; it was discarded.
    BadHeader(String),
}

#[derive(Debug)]
enum State {
    Header,
    Body(usize),
    Skip(usize),
}

#[derive(Debug)]
pub struct ContentLengthCodec {
    max_frame: usize,
    state: State,
}

impl ContentLengthCodec {
    pub fn new(max_frame: usize) -> Self {
        Self { max_frame, state: State::Header }
    }
}

fn find_blank_line(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n")
}

/// Why a header block is refused; `skip` is the body length when it is known all the same,
/// so the body is skipped rather than read as the next header.
#[derive(Debug, PartialEq, Eq)]
struct HeaderError {
    reason: String,
    skip: Option<usize>,
}

impl HeaderError {
    fn new(reason: String) -> HeaderError {
        HeaderError { reason, skip: None }
    }
}

/// Parses a header block (without its final blank line) into the body length. Exactly one
/// `Content-Length` of decimal digits: a sign, a second header (even an equal one) or anything
/// else makes the frame ambiguous, and an ambiguous frame is refused rather than guessed.
fn content_length(block: &[u8]) -> Result<usize, HeaderError> {
    let text = std::str::from_utf8(block).map_err(|_| HeaderError::new("header is not UTF-8".into()))?;
    let mut lengths = Vec::new();
    for line in text.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            return Err(HeaderError::new(format!("malformed header line {line:?}")));
        };
        // Unknown headers (and Content-Type) are tolerated, as LSP allows.
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                return Err(HeaderError::new(format!("Content-Length {value:?} is not a number")));
            }
            let n = value.parse::<usize>().map_err(|_| HeaderError::new(format!("Content-Length {value:?} is too large")))?;
            lengths.push(n);
        }
    }
    match lengths[..] {
        [n] => Ok(n),
        [] => Err(HeaderError::new("missing Content-Length header".into())),
        [first, ..] => Err(HeaderError {
            reason: format!("{} Content-Length headers", lengths.len()),
            skip: lengths.iter().all(|&n| n == first).then_some(first),
        }),
    }
}

impl Decoder for ContentLengthCodec {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, Self::Error> {
        loop {
            match self.state {
                State::Header => {
                    // Tolerate stray line breaks between frames.
                    while buf.starts_with(b"\r\n") {
                        buf.advance(2);
                    }
                    let Some(end) = find_blank_line(buf) else {
                        if buf.len() > MAX_HEADER_BYTES {
                            let n = buf.len();
                            buf.clear();
                            return Ok(Some(Frame::BadHeader(format!(
                                "no header terminator in {n} bytes"
                            ))));
                        }
                        buf.reserve(256);
                        return Ok(None);
                    };
                    let parsed = content_length(&buf[..end]);
                    buf.advance(end + 4);
                    match parsed {
                        Ok(length) if length > self.max_frame => {
                            self.state = State::Skip(length);
                            return Ok(Some(Frame::TooLarge { length, max: self.max_frame }));
                        }
                        Ok(length) => self.state = State::Body(length),
                        Err(e) => {
                            if let Some(length) = e.skip {
                                self.state = State::Skip(length);
                            }
                            return Ok(Some(Frame::BadHeader(e.reason)));
                        }
                    }
                }
                State::Body(length) => {
                    if buf.len() < length {
                        // The announced length is the sender's claim: grow by what can arrive
                        // in a read, never by the claim (fuzzing found `usize::MAX` bytes asked).
                        buf.reserve((length - buf.len()).min(READ_CHUNK));
                        return Ok(None);
                    }
                    self.state = State::Header;
                    return Ok(Some(Frame::Message(buf.split_to(length).freeze())));
                }
                State::Skip(remaining) => {
                    let n = remaining.min(buf.len());
                    buf.advance(n);
                    if n < remaining {
                        self.state = State::Skip(remaining - n);
                        return Ok(None);
                    }
                    self.state = State::Header;
                }
            }
        }
    }
}

impl Encoder<Bytes> for ContentLengthCodec {
    type Error = std::io::Error;

    fn encode(&mut self, body: Bytes, dst: &mut BytesMut) -> Result<(), Self::Error> {
        encode_frame(&body, dst);
        Ok(())
    }
}

pub fn encode_frame(body: &[u8], dst: &mut BytesMut) {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    dst.reserve(header.len() + body.len());
    dst.extend_from_slice(header.as_bytes());
    dst.extend_from_slice(body);
}

/// The most the decoder reserves ahead of a body it is waiting for.
const READ_CHUNK: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_announced_length_under_a_huge_cap_allocates_nothing_ahead() {
        // Found by fuzzing (fuzz/artifacts/codec): this panicked with "capacity overflow".
        let mut codec = ContentLengthCodec::new(usize::MAX);
        let mut buf = BytesMut::from(&b"Content-Length: 18446744073709551615\r\n\r\n{}"[..]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        assert!(buf.capacity() < 1 << 20, "reserved {} bytes", buf.capacity());
    }

    fn decode_all(codec: &mut ContentLengthCodec, chunks: &[&[u8]]) -> Vec<Frame> {
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            while let Some(frame) = codec.decode(&mut buf).unwrap() {
                out.push(frame);
            }
        }
        out
    }

    fn msg(s: &str) -> Frame {
        Frame::Message(Bytes::copy_from_slice(s.as_bytes()))
    }

    #[test]
    fn coalesced_frames_split() {
        let mut c = ContentLengthCodec::new(1024);
        let frames = decode_all(&mut c, &[b"Content-Length: 2\r\n\r\n{}Content-Length: 4\r\n\r\nnull"]);
        assert_eq!(frames, vec![msg("{}"), msg("null")]);
    }

    #[test]
    fn byte_by_byte_input() {
        let mut c = ContentLengthCodec::new(1024);
        let input = b"content-length: 7\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[1,2,3]";
        let chunks: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(decode_all(&mut c, &chunks), vec![msg("[1,2,3]")]);
    }

    #[test]
    fn oversize_is_skipped_then_recovers() {
        let mut c = ContentLengthCodec::new(4);
        let frames = decode_all(
            &mut c,
            &[b"Content-Length: 10\r\n\r\n01234", b"56789Content-Length: 2\r\n\r\nok"],
        );
        assert_eq!(frames, vec![Frame::TooLarge { length: 10, max: 4 }, msg("ok")]);
    }

    #[test]
    fn bad_header_then_recovers() {
        let mut c = ContentLengthCodec::new(64);
        let frames = decode_all(&mut c, &[b"Content-Length: abc\r\n\r\nContent-Length: 2\r\n\r\n{}"]);
        assert_eq!(
            frames,
            vec![Frame::BadHeader("Content-Length \"abc\" is not a number".into()), msg("{}")]
        );
        let frames = decode_all(&mut c, &[b"X-Foo: 1\r\n\r\n"]);
        assert_eq!(frames, vec![Frame::BadHeader("missing Content-Length header".into())]);
    }

    #[test]
    fn two_content_lengths_are_refused() {
        let mut c = ContentLengthCodec::new(64);
        // Equal lengths: refused, and the body (known length) is skipped, not read as a header.
        let frames = decode_all(&mut c, &[b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}Content-Length: 4\r\n\r\nnull"]);
        assert_eq!(frames, vec![Frame::BadHeader("2 Content-Length headers".into()), msg("null")]);
        // Different lengths: refused; which body length was meant is unknowable.
        let frames = decode_all(&mut c, &[b"Content-Length: 2\r\ncontent-length: 12\r\n\r\n"]);
        assert_eq!(frames, vec![Frame::BadHeader("2 Content-Length headers".into())]);
        let frames = decode_all(&mut c, &[b"Content-Length: 2\r\n\r\n{}"]);
        assert_eq!(frames, vec![msg("{}")]);
    }

    #[test]
    fn a_length_is_digits_only() {
        let mut c = ContentLengthCodec::new(64);
        for bad in ["+12", "-1", "1_2", " ", "0x10", "1 2"] {
            let input = format!("Content-Length: {bad}\r\n\r\n");
            let frames = decode_all(&mut c, &[input.as_bytes()]);
            assert_eq!(frames, vec![Frame::BadHeader(format!("Content-Length {:?} is not a number", bad.trim()))], "{bad:?}");
        }
        let frames = decode_all(&mut c, &[b"Content-Length: 99999999999999999999999\r\n\r\n"]);
        assert_eq!(frames, vec![Frame::BadHeader("Content-Length \"99999999999999999999999\" is too large".into())]);
        let frames = decode_all(&mut c, &[b"Content-Length:  4 \r\n\r\nnull"]);
        assert_eq!(frames, vec![msg("null")]);
    }

    #[test]
    fn header_flood_is_dropped() {
        let mut c = ContentLengthCodec::new(64);
        let junk = vec![b'x'; MAX_HEADER_BYTES + 1];
        let frames = decode_all(&mut c, &[&junk, b"Content-Length: 2\r\n\r\n{}"]);
        assert!(matches!(frames[0], Frame::BadHeader(_)));
        assert_eq!(frames[1], msg("{}"));
    }

    #[test]
    fn encodes_exact_bytes() {
        let mut dst = BytesMut::new();
        encode_frame(b"{\"a\":1}", &mut dst);
        assert_eq!(&dst[..], b"Content-Length: 7\r\n\r\n{\"a\":1}");
    }
}
