use super::read::READ;
use super::*;
use crate::tokenize::{for_model, Encoding};
use serde_json::json;

fn enc() -> EncodingChoice {
    for_model(None)
}

fn budget(max_tokens: u32) -> Budget {
    Budget { max_tokens, keep_bytes: DEFAULT_KEEP_BYTES, ..Budget::default() }
}

fn text_of(o: &ModelOutput) -> &str {
    match o {
        ModelOutput::Text(t) | ModelOutput::ErrorText(t) => t,
        _ => panic!("not text: {o:?}"),
    }
}

/// A page as the model would read it.
fn page(shelf: &Shelf, readers: &[&str], arguments: &Value, budget: Budget) -> Paged {
    let p = super::read::page(shelf, readers, arguments, budget);
    Paged { output: if p.is_error { ModelOutput::ErrorText(p.text) } else { ModelOutput::Text(p.text) }, is_error: p.is_error, raw: p.raw }
}

struct Paged {
    output: ModelOutput,
    is_error: bool,
    raw: Option<Value>,
}

/// Lines of mixed text: ASCII, Chinese and emoji, so a token may end inside a character.
fn long_text(lines: usize) -> String {
    (0..lines).map(|i| format!("line {i}: the quick brown fox 狐狸跳过了懒狗 🦊🐕 {}\n", i * 7919 % 1000)).collect()
}

/// Reads a kept result whole, page by page, as a model would.
fn read_all(shelf: &Shelf, readers: &[&str], reference: &str, from: usize, max: u32) -> (String, usize) {
    let (mut text, mut offset, mut pages) = (String::new(), from, 0);
    loop {
        let done = page(shelf, readers, &json!({"ref": reference, "offset": offset}), budget(max));
        assert!(!done.is_error, "{:?}", done.output);
        let raw = done.raw.unwrap();
        let body = text_of(&done.output);
        let cut = body.rfind("\n[toolreg: tokens ").unwrap();
        text.push_str(&body[..cut]);
        assert!(Encoding::O200kBase.count(body) <= max as usize, "a page is within the budget");
        pages += 1;
        match raw["next"].as_u64() {
            Some(next) => offset = next as usize,
            None => return (text, pages),
        }
    }
}

#[test]
fn a_result_within_the_budget_passes_whole() {
    let shelf = Shelf::default();
    let out = ModelOutput::Text("short".into());
    assert!(fit(&shelf, "host", "t", &out, None, false, budget(1_000), enc()).is_none());
    assert!(fit(&shelf, "host", "t", &ModelOutput::Text(long_text(2_000)), None, false, budget(0), enc()).is_none(), "0 is off");
    assert!(shelf.is_empty());
}

#[test]
fn a_long_text_is_cut_within_the_budget_and_every_byte_is_read_by_page() {
    let shelf = Shelf::default();
    let whole = long_text(3_000);
    let total = Encoding::O200kBase.count(&whole);
    let raw = json!({"content": [{"type": "text", "text": whole}]});
    let (output, cut) = fit(&shelf, "session:a", "mcp__fs__read", &ModelOutput::Text(whole.clone()), Some(&raw), false, budget(2_000), enc()).unwrap();
    let shown = text_of(&output);
    assert!(Encoding::O200kBase.count(shown) <= 2_000, "the model's text is within the budget");
    assert_eq!(cut.total_tokens, total);
    assert_eq!(cut.shown_tokens, 2_000 - NOTE_TOKENS);
    let reference = cut.reference.clone().unwrap();
    assert!(shown.ends_with(&format!("Read on with tool_result_read {{\"ref\": \"{reference}\", \"offset\": {}}}.]", cut.shown_tokens)), "{shown}");
    assert!(shown.contains(&format!("this result is {total} tokens")));
    let head = &shown[..shown.rfind("\n[toolreg:").unwrap()];
    assert!(whole.starts_with(head) && !head.is_empty());
    // The cut CallToolResult says the same.
    let parts = cut.result.unwrap()["content"].as_array().unwrap().clone();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0]["text"], head);
    assert!(parts[1]["text"].as_str().unwrap().starts_with("[toolreg: this result is"));
    // Reading on from the note's offset gives the rest, exactly.
    let (rest, pages) = read_all(&shelf, &["session:a"], &reference, cut.shown_tokens, 2_000);
    assert_eq!(format!("{head}{rest}"), whole);
    assert!(pages >= (total - cut.shown_tokens) / 2_000, "{pages} pages");
}

#[test]
fn whole_parts_are_kept_while_they_fit_and_media_stay_out_of_the_budget() {
    let shelf = Shelf::default();
    let small = "a small first part";
    let big = long_text(400);
    let raw = json!({"content": [
        {"type": "text", "text": small},
        {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
        {"type": "text", "text": big},
        {"type": "text", "text": "a third part that cannot fit any more"},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
    ], "structuredContent": {"big": big}});
    let (output, _) = crate::output::from_call_result(&raw);
    let (_, cut) = fit(&shelf, "host", "t", &output, Some(&raw), false, budget(1_000), enc()).unwrap();
    let parts = cut.result.unwrap()["content"].as_array().unwrap().clone();
    let kinds: Vec<&str> = parts.iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "image", "text", "audio", "text"], "{parts:?}");
    assert_eq!(parts[0]["text"], small);
    let cut_part = parts[2]["text"].as_str().unwrap();
    assert!(big.starts_with(cut_part) && cut_part.len() < big.len());
    assert!(!parts.iter().any(|p| p["text"] == "a third part that cannot fit any more"));
}

#[test]
fn structured_content_alone_is_paged_as_pretty_json() {
    let shelf = Shelf::default();
    let rows: Vec<Value> = (0..2_000).map(|i| json!({"id": i, "name": format!("row {i}"), "tags": ["a", "b"]})).collect();
    let value = json!({"rows": rows});
    let raw = json!({"content": [], "structuredContent": value});
    let (output, _) = crate::output::from_call_result(&raw);
    let (shown, cut) = fit(&shelf, "host", "db", &output, Some(&raw), false, budget(1_000), enc()).unwrap();
    assert!(matches!(shown, ModelOutput::Text(_)), "a cut JSON answer is text");
    let (rest, _) = read_all(&shelf, &["host"], cut.reference.as_deref().unwrap(), cut.shown_tokens, 5_000);
    let head = text_of(&shown);
    let whole = format!("{}{rest}", &head[..head.rfind("\n[toolreg:").unwrap()]);
    assert_eq!(serde_json::from_str::<Value>(&whole).unwrap(), value);
    assert!(whole.contains("\n  \"rows\": ["), "pretty");
}

#[test]
fn an_error_stays_an_error_when_cut() {
    let shelf = Shelf::default();
    let (out, _) = fit(&shelf, "host", "t", &ModelOutput::ErrorText(long_text(500)), None, true, budget(300), enc()).unwrap();
    assert!(matches!(out, ModelOutput::ErrorText(_)));
}

#[test]
fn only_its_owner_reads_a_kept_result() {
    let shelf = Shelf::default();
    let (_, cut) = fit(&shelf, "mcp-session:one", "t", &ModelOutput::Text(long_text(500)), None, false, budget(300), enc()).unwrap();
    let reference = cut.reference.unwrap();
    let other = page(&shelf, &["mcp-session:two"], &json!({"ref": reference}), budget(300));
    assert!(other.is_error);
    let why = text_of(&other.output);
    assert!(why.contains("No kept result has the ref") && why.contains("Call the tool again"), "{why}");
    // The same words as a ref never made: a ref tells a stranger nothing.
    let unknown = page(&shelf, &["mcp-session:two"], &json!({"ref": "r-000000000000000000000000"}), budget(300));
    assert_eq!(text_of(&unknown.output).replace("r-000000000000000000000000", &reference), why);
    assert!(!page(&shelf, &["mcp-session:one"], &json!({"ref": reference}), budget(300)).is_error);
    shelf.forget("mcp-session:one");
    assert!(page(&shelf, &["mcp-session:one"], &json!({"ref": reference}), budget(300)).is_error, "gone with its session");
}

#[test]
fn bad_reads_get_readable_refusals() {
    let shelf = Shelf::default();
    let (_, cut) = fit(&shelf, "host", "mcp__x__y", &ModelOutput::Text(long_text(500)), None, false, budget(300), enc()).unwrap();
    let r = cut.reference.unwrap();
    let past = page(&shelf, &["host"], &json!({"ref": r, "offset": cut.total_tokens}), budget(300));
    assert!(past.is_error && text_of(&past.output).contains("past the end of the result of mcp__x__y"), "{:?}", past.output);
    let bad = page(&shelf, &["host"], &json!({"offset": 3}), budget(300));
    assert!(bad.is_error && text_of(&bad.output).contains("Invalid arguments for tool_result_read"));
    let neg = page(&shelf, &["host"], &json!({"ref": r, "offset": -1}), budget(300));
    assert!(neg.is_error && text_of(&neg.output).contains("offset must be an integer"));
    // maxTokens asks for less than the budget, never more.
    let few = page(&shelf, &["host"], &json!({"ref": r, "maxTokens": 10}), budget(300));
    assert_eq!(few.raw.unwrap()["next"], 10);
    let many = page(&shelf, &["host"], &json!({"ref": r, "maxTokens": 100_000}), budget(300));
    assert_eq!(many.raw.unwrap()["next"], 300 - NOTE_TOKENS as u64);
    assert_eq!(READ, "tool_result_read");
}

#[test]
fn the_shelf_keeps_its_bound_and_drops_the_least_recently_read() {
    let shelf = Shelf::default();
    let doc = |n| Doc::new(long_text(n), enc());
    let one = doc(100);
    let size = one.bytes() + "host".len() + "t".len();
    let bound = size * 2 + size / 2;
    let a = shelf.keep("host", "t", one, bound).unwrap();
    let b = shelf.keep("host", "t", doc(100), bound).unwrap();
    assert!(shelf.get(&a, &["host"]).is_some(), "a read now: b is the least recently read");
    let c = shelf.keep("host", "t", doc(100), bound).unwrap();
    assert!(shelf.bytes() <= bound);
    assert!(shelf.get(&b, &["host"]).is_none() && shelf.get(&a, &["host"]).is_some() && shelf.get(&c, &["host"]).is_some());
    // One larger than the bound is not kept, and its note says it cannot be read on.
    assert!(shelf.keep("host", "t", doc(10_000), bound).is_none());
    let small = Budget { max_tokens: 300, keep_bytes: 1_000, ..Budget::default() };
    let (out, cut) = fit(&shelf, "host", "t", &ModelOutput::Text(long_text(500)), None, false, small, enc()).unwrap();
    assert!(cut.reference.is_none());
    assert!(text_of(&out).contains("larger than toolreg keeps (results.keepBytes)"));
}

#[test]
fn pages_meet_exactly_inside_multibyte_characters() {
    let text = "狐🦊".repeat(3_000);
    let d = Doc::new(text.clone(), enc());
    let mut joined = String::new();
    let mut i = 0;
    while i < d.tokens() {
        joined.push_str(d.slice(i, i + 7));
        i += 7;
    }
    assert_eq!(joined, text);
}

#[test]
fn the_note_and_its_random_ref_never_push_a_cut_or_a_page_past_the_budget() {
    // Texts whose cut falls in words, numbers, CJK and emoji; each cut gets a fresh random ref,
    // whose hex digits tokenize differently every time.
    let texts = [long_text(200), "x".repeat(50_000), "9".repeat(5_000), "狐🦊".repeat(2_000), "word ".repeat(2_000)];
    let mut cuts = 0;
    for text in &texts {
        for budget_tokens in [200u32, 257, 300, 1_000] {
            for _ in 0..20 {
                let shelf = Shelf::default();
                let Some((out, cut)) = fit(&shelf, "host", "mcp__some_server__some_tool", &ModelOutput::Text(text.clone()), None, false, budget(budget_tokens), enc()) else {
                    assert!(Encoding::O200kBase.count(text) <= budget_tokens as usize, "over the budget and not cut");
                    continue;
                };
                cuts += 1;
                let n = Encoding::O200kBase.count(text_of(&out));
                assert!(n <= budget_tokens as usize, "{n} tokens over {budget_tokens}");
                let p = page(&shelf, &["host"], &json!({"ref": cut.reference.unwrap(), "offset": cut.shown_tokens}), budget(budget_tokens));
                let n = Encoding::O200kBase.count(text_of(&p.output));
                assert!(n <= budget_tokens as usize, "a page of {n} tokens over {budget_tokens}");
            }
        }
    }
    assert!(cuts >= 300, "{cuts} cuts");
}
