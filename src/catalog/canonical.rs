//! The canonical JSON that pin fingerprints hash (`pins::fingerprint`).
//!
//! Hand-written on purpose, not RFC 8785 (JCS) through a crate: the fingerprints in every pins
//! file on disk hash this exact text, and JCS text differs from it. JCS writes numbers as
//! ECMAScript does (`1.0` as `1`, `-0.0` as `0`; schemas are full of `"minimum": 0.0`) and sorts
//! keys by UTF-16 code units (U+1F600 before U+FF61), where this sorts by UTF-8 bytes. Either
//! difference would turn pinned tools `changed` for no change of theirs. What is left to write
//! by hand is the key sort: serde_json keeps insertion order here (`preserve_order`), and every
//! scalar and key is written by serde_json itself. The tests pin the output byte for byte.

use serde_json::Value;

/// Canonical JSON: object keys sorted by UTF-8 bytes at every depth, no whitespace, numbers and
/// strings exactly as serde_json writes them.
pub fn canonical(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sorted_scalars_as_serde_json_writes_them() {
        let check = |text: &str, want: &str| {
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(canonical(&v), want, "{text}");
        };
        // Keys by UTF-8 bytes at every depth (RFC 8785 would put U+1F600 before U+FF61: UTF-16).
        check(r#"{"b":1,"a":2,"B":3,"é":4,"\uff61":5,"\ud83d\ude00":6,"":7}"#, r#"{"":7,"B":3,"a":2,"b":1,"é":4,"｡":5,"😀":6}"#);
        check(r#"[{"z":{"y":[],"x":{}},"a":[3,1,2]}, [], {}]"#, r#"[{"a":[3,1,2],"z":{"x":{},"y":[]}},[],{}]"#);
        // Numbers as serde_json writes them (RFC 8785 would write 1.0 as 1 and -0.0 as 0).
        check("[1.0, -0.0, 1e21, 1E-7, 0.1, 100, -5, 1.5e300]", "[1.0,-0.0,1e+21,1e-7,0.1,100,-5,1.5e+300]");
        check("[18446744073709551615, -9223372036854775808]", "[18446744073709551615,-9223372036854775808]");
        // Strings escaped as serde_json does: short escapes, \u00XX for other controls, the rest raw.
        check(r#""\"\\\/\b\f\n\r\t\u0001\u001f\u007f\u2028\u00e9""#, "\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}\u{2028}é\"");
        check(r#"{"k\n":true,"k":false,"n":null}"#, r#"{"k":false,"k\n":true,"n":null}"#);
    }
}
