//! The frame codec fed arbitrary bytes in arbitrary chunks, as reads from a pipe arrive.
//!
//! Input: one byte of parameters (frame cap, chunking seed), then the stream. Checks: decoding
//! never errors or panics; no message is larger than the cap; chunking changes nothing (the
//! same frames as when the stream arrives at once), except where the "no header terminator"
//! cut-off applies, whose position depends on how much had arrived; a frame encoded by
//! `encode_frame` decodes to the same body.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use tokio_util::codec::Decoder;
use toolreg::transport::codec::{encode_frame, ContentLengthCodec, Frame};

fn decode_all(max: usize, chunks: &mut dyn Iterator<Item = &[u8]>) -> Vec<Frame> {
    let mut codec = ContentLengthCodec::new(max);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(frame) = codec.decode(&mut buf).expect("the decoder never fails the stream") {
            if let Frame::Message(body) = &frame {
                assert!(body.len() <= max, "a {}-byte message passed a {max}-byte cap", body.len());
            }
            frames.push(frame);
        }
    }
    // At EOF the stream may end mid-frame; that must not panic either.
    let _ = codec.decode_eof(&mut buf);
    frames
}

fn cut_off(frames: &[Frame]) -> bool {
    frames.iter().any(|f| matches!(f, Frame::BadHeader(m) if m.starts_with("no header terminator")))
}

fuzz_target!(|data: &[u8]| {
    let Some((&params, stream)) = data.split_first() else { return };
    let max = [0, 1, 16, 64, 256, 4096, 1 << 20, usize::MAX][(params & 7) as usize];

    let whole = decode_all(max, &mut std::iter::once(stream));

    // Chunk sizes from a small generator seeded by the parameter byte.
    let mut state = u32::from(params >> 3) | 1;
    let mut rest = stream;
    let mut chunks = Vec::new();
    while !rest.is_empty() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let n = 1 + (state >> 16) as usize % 64;
        let (head, tail) = rest.split_at(n.min(rest.len()));
        chunks.push(head);
        rest = tail;
    }
    let chunked = decode_all(max, &mut chunks.into_iter());
    if !cut_off(&whole) && !cut_off(&chunked) {
        assert_eq!(whole, chunked, "chunking changed the frames");
    }

    // Round trip: the stream as one body.
    if stream.len() <= max {
        let mut framed = BytesMut::new();
        encode_frame(stream, &mut framed);
        let frames = decode_all(max, &mut std::iter::once(&framed[..]));
        assert_eq!(frames, vec![Frame::Message(bytes::Bytes::copy_from_slice(stream))]);
    }
});
