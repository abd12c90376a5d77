//! `IdScan`: the top-level `"id"` of a JSON object fed in pieces, in constant memory, so an
//! oversized line can still fail the request it answered (the TypeScript SDK writes the id last).

use serde_json::Value;

/// Finds the value of the top-level `"id"` of a JSON object fed in pieces, in constant memory.
#[derive(Default)]
pub(super) struct IdScan {
    depth: u32,
    in_str: bool,
    escaped: bool,
    expect_key: bool,
    /// The first bytes of the top-level key being read (three are enough to tell `id`).
    key: Option<Vec<u8>>,
    key_is_id: bool,
    value: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
}

const MAX_ID_BYTES: usize = 256;

impl IdScan {
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.found.is_some() {
                return;
            }
            if self.in_str {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_str = false;
                    if let Some(k) = self.key.take() {
                        self.key_is_id = k == b"id";
                    }
                } else if let Some(k) = &mut self.key {
                    if k.len() < 3 {
                        k.push(b);
                    }
                }
                self.capture(b);
                continue;
            }
            match b {
                b'"' => {
                    self.in_str = true;
                    if self.depth == 1 && self.expect_key {
                        self.key = Some(Vec::new());
                    }
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    if self.depth == 1 {
                        self.expect_key = b == b'{';
                    }
                }
                b'}' | b']' if self.depth == 1 => {
                    self.finish_value();
                    self.depth = 0;
                    continue;
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                b',' if self.depth == 1 => {
                    self.finish_value();
                    self.expect_key = true;
                    continue;
                }
                b':' if self.depth == 1 => {
                    self.expect_key = false;
                    if std::mem::take(&mut self.key_is_id) {
                        self.value = Some(Vec::new());
                        continue;
                    }
                }
                _ => {}
            }
            self.capture(b);
        }
    }

    fn capture(&mut self, b: u8) {
        if let Some(v) = &mut self.value {
            if v.len() < MAX_ID_BYTES {
                v.push(b);
            }
        }
    }

    fn finish_value(&mut self) {
        if let Some(v) = self.value.take() {
            self.found = Some(v);
        }
    }

    /// A string or number id, if one was seen.
    pub(super) fn id(&self) -> Option<Value> {
        let v: Value = serde_json::from_slice(self.found.as_deref()?).ok()?;
        (v.is_string() || v.is_number()).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn id_of(text: &str, piece: usize) -> Option<Value> {
        let mut scan = IdScan::default();
        for chunk in text.as_bytes().chunks(piece) {
            scan.feed(chunk);
        }
        scan.id()
    }

    #[test]
    fn id_is_found_first_last_and_in_pieces() {
        for piece in [1, 3, 1000] {
            assert_eq!(id_of(r#"{"jsonrpc":"2.0","id":7,"result":{"id":9}}"#, piece), Some(json!(7)));
            assert_eq!(id_of(r#"{"result":{"id":9,"s":"\"id\":3"},"jsonrpc":"2.0","id":"a\"b"}"#, piece), Some(json!("a\"b")));
            assert_eq!(id_of(r#"{ "idx": 1, "result": [1, {"id": 2}], "id" : 12 }"#, piece), Some(json!(12)));
            assert_eq!(id_of(r#"{"method":"notifications/progress","params":{"id":1}}"#, piece), None);
            assert_eq!(id_of(r#"[{"id":1}]"#, piece), None);
        }
    }
}
