//! `Doc::count_with` (a head or a page and its note, counted around its ends) and
//! `may_exceed`'s length bound give what the full count gives, on texts of every kind.

use super::*;
use crate::tokenize::{split, Encoding};
use serde_json::json;

const ENCODINGS: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

/// Notes and other tails: what follows a head may join its last piece or not.
const TAILS: [&str; 6] = ["\n[toolreg: the rest is kept. Read on with tool_result_read {\"ref\": \"r1\", \"offset\": 12}.]", "", "abc", " /x", "\n\n  y", "'s 12"];

fn doc(text: &str, name: Encoding) -> Doc {
    Doc::new(text.to_string(), EncodingChoice { name, exact: true })
}

/// Every head, page and tail of `doc` (every `step`-th token) counted both ways.
fn check(doc: &Doc, step: usize) {
    let total = doc.tokens();
    let froms = [0, 1, total / 3, total / 2];
    for from in froms.into_iter().filter(|f| *f < total.max(1)) {
        for to in (from..=total).step_by(step.max(1)).chain([total]) {
            for tail in TAILS {
                let whole = doc.encoding().name.count(&format!("{}{tail}", doc.slice(from, to)));
                assert_eq!(doc.count_with(from, to, tail), whole, "{:?}: tokens {from}..{to} of {:?} and {tail:?}", doc.encoding().name, doc.text);
            }
        }
    }
}

fn pretty_json() -> String {
    let rows: Vec<Value> = (0..16)
        .map(|i| json!({"id": i, "name": format!("row {i}"), "path": format!("/srv/data/{i}/file.txt"), "tags": ["a", "b/c", "字"], "score": i as f64 / 7.0, "ok": i % 2 == 0, "note": "emoji 🎉 and 漢字, \"quoted\"\n next line"}))
        .collect();
    serde_json::to_string_pretty(&json!({"rows": rows, "total": 16, "empty": {}, "none": null})).unwrap()
}

fn texts() -> Vec<String> {
    let prose = "The quick brown fox jumps over the lazy dog. It's what they'll do, isn't it?\n\nA second paragraph: numbers 1234567 and 3.14159, a URL https://example.com/a/b?c=d.\n".repeat(3);
    let code = "fn main() {\n    let x = 42;\n\tif x > 1 {\n        println!(\"{x}\");\n    }\n}\n// comment\n/* block */\n  \n\n   \r\n".repeat(3);
    let cjk = "これは日本語の文章です。\n中文的句子也在这里，还有标点符号！\n한국어 문장도 있습니다.\n\n".repeat(4);
    let emoji = "👩‍💻 writes code 🎉🎉\n🦊🐕 fox and dog\n   🏳️‍🌈 flag\n\u{2028}odd line\u{85}next\u{a0}nbsp\n\u{301}mark\n".repeat(4);
    let lines = "\n\n\n/\n/x\n//\n \n\t\n\r\n\r\r\n.\n,\n/ \n".repeat(5);
    vec![prose, code, cjk, emoji, lines, pretty_json()]
}

#[test]
fn counted_around_the_ends_as_counted_whole() {
    for name in ENCODINGS {
        for text in texts() {
            let d = doc(&text, name);
            check(&d, (d.tokens() / 40).max(1));
        }
    }
}

#[test]
fn random_texts_of_the_characters_that_move_splits_count_the_same() {
    let alphabet = [
        "\n", "\r\n", "\r", " ", "  ", "\t", "/", "//", ".", ",\n", ";", "a", "Hello", "world", "'s", "'LL", "1", "123", "45678", "字", "漢字テキスト", "🎉", "👩‍💻", "\u{301}", "\u{a0}",
        "\u{2028}", "\u{85}", "\u{b}", "\"key\": ", "{", "}", "[", "]", "-", "é", "Ω", "١٢٣", "x/", "\n/", "\n ", "\n\t",
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..150 {
        let len = 5 + (next() % 60) as usize;
        let text: String = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
        let d = doc(&text, ENCODINGS[round % 2]);
        check(&d, 1 + (next() % 3) as usize);
    }
}

#[test]
fn a_pretty_json_answer_is_counted_again_only_around_its_ends() {
    // The fixed splits are found in the text that matters most (a JSON answer), so the count
    // is not the whole text again.
    let text = pretty_json();
    let (first, last) = (split::first_fixed(&text).unwrap(), split::last_fixed(&text).unwrap());
    assert!(first < 20 && last > text.len() - 40, "{first} {last} of {}", text.len());
    // One line of text has none: it is counted whole.
    assert_eq!((split::first_fixed("a b c"), split::last_fixed("a\n/b")), (None, None));
}

#[test]
fn may_exceed_is_false_only_where_cut_cuts_nothing() {
    let enc = EncodingChoice { name: Encoding::O200kBase, exact: false };
    let b = |max_tokens| Budget { max_tokens, ..Budget::default() };
    let big = json!({"items": (0..300).map(|i| json!({"n": i, "s": "字🎉 text"})).collect::<Vec<_>>()});
    let outputs = [
        ModelOutput::Json(json!({"a": 1, "b": "short"})),
        ModelOutput::ErrorJson(json!(vec!["x"; 40])),
        ModelOutput::Json(big.clone()),
        ModelOutput::Text("字".repeat(300)),
        ModelOutput::Content(vec![output::Part::Text { text: "a".repeat(200) }, output::Part::Text { text: "b".repeat(200) }]),
        ModelOutput::Content(vec![]),
    ];
    for output in &outputs {
        let len = output.text().len();
        for max in [1, 20, 199, 200, 201, 400, 401, 402, (len as u32).saturating_sub(1), len as u32, len as u32 + 1, 1_000_000] {
            let may = may_exceed(output, b(max));
            // The bound is the text's length, exactly.
            assert_eq!(may, len > max as usize, "{output:?} at {max}");
            if !may {
                assert!(cut(output, None, false, b(max), enc, "r").is_none());
            }
        }
        assert!(!may_exceed(output, b(0)), "off");
    }
    // Over the bound is not over the budget: `cut` decides by tokens.
    let json = ModelOutput::Json(big);
    let (len, tokens) = (json.text().len(), Encoding::O200kBase.count(&json.text()));
    assert!(tokens < len);
    assert!(may_exceed(&json, b(tokens as u32)) && cut(&json, None, false, b(tokens as u32), enc, "r").is_none());
}
