//! Content-Length frames written and read by hand, not through the crate's codec: for the tests
//! and the benches that drive the real binary over a pipe (`benches/*.rs` include this file by
//! path).
#![allow(dead_code)]

use std::io::BufRead;

/// A frame as bytes.
pub fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{}", body.len(), body).into_bytes()
}

/// The next frame's body; the stream ending first fails.
pub fn read_frame(r: &mut impl BufRead) -> Vec<u8> {
    let mut len = 0;
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).unwrap() > 0, "stdout closed");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
    body
}
