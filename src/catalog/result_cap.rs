//! A cap on what one tool result may hand on (to the host, and through it to the model).
//!
//! A result under the cap passes untouched. Over it, content is kept in order while it fits:
//! a text part that does not fit is cut (at a character boundary) and ends with
//! `[... truncated: N of M bytes shown]`; any other part (image, audio, resource) that does not
//! fit becomes a text placeholder naming its type and size; `structuredContent` that does not
//! fit is dropped with a note. Nothing is dropped silently. Sizes count the text bytes of text
//! parts and the JSON bytes of everything else, so the cap is approximate by the few bytes of
//! notes and JSON quoting.

use serde_json::{json, Value};

/// 8 MiB: a bound on memory, not on what the model reads. The model reads a result within its
/// token budget (`results`, 25,000 tokens by default) and pages through the rest, which is kept
/// whole up to here: a 2 MB file or a long page is read to its end, not thrown away past 1 MiB.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 8 * 1024 * 1024;

/// The length of `v` as JSON, counted without building the text (every result passes here).
fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, v) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

pub fn cap(mut result: Value, max: usize) -> Value {
    if json_len(&result) <= max {
        return result;
    }
    let Some(map) = result.as_object_mut() else { return result };
    let mut left = max;
    if let Some(Value::Array(parts)) = map.get_mut("content") {
        for part in parts.iter_mut() {
            if let Some(text) = part.get("text").and_then(Value::as_str).filter(|_| part["type"] == "text") {
                let total = text.len();
                if total <= left {
                    left -= total;
                    continue;
                }
                let mut keep = left;
                while !text.is_char_boundary(keep) {
                    keep -= 1;
                }
                let cut = format!("{}\n[... truncated: {keep} of {total} bytes shown]", &text[..keep]);
                part["text"] = Value::String(cut);
                left = 0;
                continue;
            }
            let size = json_len(part);
            if size <= left {
                left -= size;
                continue;
            }
            let kind = part.get("type").and_then(Value::as_str).unwrap_or("unknown").to_owned();
            *part = json!({"type": "text",
                "text": format!("[{kind} part of {size} bytes not shown: the result is over the limit of {max} bytes (maxResultBytes)]")});
        }
    }
    if let Some(structured) = map.get("structuredContent") {
        let size = json_len(structured);
        if size > left {
            map.remove("structuredContent");
            let note = format!("[structuredContent of {size} bytes not shown: the result is over the limit of {max} bytes (maxResultBytes)]");
            let note = json!({"type": "text", "text": note});
            match map.get_mut("content") {
                Some(Value::Array(parts)) => parts.push(note),
                _ => {
                    map.insert("content".into(), json!([note]));
                }
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_results_pass_untouched() {
        let r = json!({"content": [{"type": "text", "text": "hello"}], "structuredContent": {"a": 1}});
        assert_eq!(cap(r.clone(), 1000), r);
    }

    #[test]
    fn text_is_cut_with_a_note_and_later_parts_become_placeholders() {
        let r = json!({"content": [
            {"type": "text", "text": "abcdef"},
            {"type": "text", "text": "é".repeat(10)},
            {"type": "image", "data": "AAAA".repeat(100), "mimeType": "image/png"},
        ], "structuredContent": {"big": "x".repeat(100)}, "isError": false});
        let out = cap(r, 11);
        assert_eq!(out["content"][0]["text"], "abcdef");
        // 5 bytes left, "é" is 2 bytes: 4 bytes (two characters) are kept.
        assert_eq!(out["content"][1]["text"], "éé\n[... truncated: 4 of 20 bytes shown]");
        let image = out["content"][2]["text"].as_str().unwrap();
        assert!(image.starts_with("[image part of 4") && image.contains("(maxResultBytes)"), "{image}");
        assert!(out.get("structuredContent").is_none());
        assert!(out["content"][3]["text"].as_str().unwrap().starts_with("[structuredContent of 110 bytes not shown"));
        assert_eq!(out["isError"], false);
    }

    #[test]
    fn structured_only_results_are_never_emptied_silently() {
        let out = cap(json!({"content": [], "structuredContent": {"rows": "x".repeat(50)}}), 20);
        assert_eq!(out["content"].as_array().unwrap().len(), 1);
    }
}
