//! Transcript recording (`serve --record FILE`).
//!
//! One JSON object per line: `{"dir": "in" | "out", "msg": <the message>}`; a body that is
//! not JSON is kept as `{"dir": "in", "raw": "<text>"}` so a replay can send the same bytes.
//! Lines are written as the messages pass, so a crash loses at most the line in flight.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    In,
    Out,
}

pub struct Recorder {
    file: Mutex<BufWriter<File>>,
}

impl Recorder {
    pub fn create(path: &Path) -> std::io::Result<Recorder> {
        Ok(Recorder { file: Mutex::new(BufWriter::new(File::create(path)?)) })
    }

    pub fn record(&self, dir: Direction, body: &[u8]) {
        let dir = match dir {
            Direction::In => "in",
            Direction::Out => "out",
        };
        let line = match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(msg) => serde_json::json!({ "dir": dir, "msg": msg }),
            Err(_) => serde_json::json!({ "dir": dir, "raw": String::from_utf8_lossy(body) }),
        };
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // A failing transcript must not take the session down; the log says why.
        let res = serde_json::to_writer(&mut *file, &line)
            .map_err(std::io::Error::from)
            .and_then(|_| file.write_all(b"\n"))
            .and_then(|_| file.flush());
        if let Err(e) = res {
            tracing::warn!("transcript write failed: {e}");
        }
    }
}
