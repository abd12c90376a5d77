//! Results that fit the context (issue 42): a token budget per tool result, the rest kept and
//! read by page.
//!
//! A result whose model-readable text is over `Budget::max_tokens` (counted with the tokenizer
//! of the plan the call ran under) is cut at a token boundary: whole content parts in order
//! while they fit, then the part that does not fit cut, then a note that says how much was left
//! out and how to read on (`tool_result_read`, `read.rs`). The whole text is kept on the
//! `Shelf` (`shelf.rs`) under a random ref that only its owner (the plan's session, the plan,
//! the host, a gateway session) may read.
//!
//! What is paged (`Doc`) is what the model reads of the result: its text parts (images, audio
//! and blobs as placeholders), or, for a result with no content, its structured content as
//! pretty JSON. Images sent as media are kept beside a cut text; their tokens are taken off the
//! text's budget first (`media_budget`). Pages are ranges of the document's tokens; a token
//! that ends inside a character ends its page after that character, so pages meet exactly and
//! every byte is on one page.

pub mod media_budget;
pub mod read;
pub mod shelf;

use crate::output::{self, ModelOutput};
use crate::tokenize::{self, EncodingChoice};
use serde_json::{json, Value};

pub use shelf::Shelf;

/// Claude Code's default cap on an MCP tool's output (`MAX_MCP_OUTPUT_TOKENS`).
pub const DEFAULT_MAX_TOKENS: u32 = 25_000;
pub const MIN_TOKENS: u32 = 200;
pub const MAX_TOKENS: u32 = 1_000_000;
/// Whole results kept per host or gateway, in bytes (text and token offsets).
pub const DEFAULT_KEEP_BYTES: usize = 64 << 20;
/// Tokens of the budget left for the note that ends a cut result.
/// Tokens of the budget first set aside for the note that ends a cut result or a page (the
/// count of the two together is then checked).
pub(crate) const NOTE_TOKENS: usize = 80;

/// The budget of one result and what is kept beyond it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// 0: off.
    pub max_tokens: u32,
    pub keep_bytes: usize,
    /// Whether images and audio go to the model as media (`results.media`).
    pub media: crate::media::MediaMode,
}

impl Default for Budget {
    fn default() -> Self {
        Budget { max_tokens: DEFAULT_MAX_TOKENS, keep_bytes: DEFAULT_KEEP_BYTES, media: crate::media::MediaMode::Model }
    }
}

impl Budget {
    pub fn is_on(&self) -> bool {
        self.max_tokens > 0
    }
}

/// A result's model-readable text and where its tokens end.
#[derive(Debug)]
pub struct Doc {
    pub text: String,
    /// Byte offset where each token ends, in order.
    ends: Vec<u32>,
    /// Byte ranges of the content parts in `text` (empty when the text is not from parts).
    parts: Vec<(usize, usize)>,
    enc: EncodingChoice,
}

impl Doc {
    pub fn new(text: String, enc: EncodingChoice) -> Doc {
        let ends = enc.name.token_ends(&text).into_iter().map(|e| u32::try_from(e).unwrap_or(u32::MAX)).collect();
        Doc { text, ends, parts: Vec::new(), enc }
    }

    /// The tokenizer its tokens are of.
    pub fn encoding(&self) -> EncodingChoice {
        self.enc
    }

    pub fn tokens(&self) -> usize {
        self.ends.len()
    }

    /// Bytes held: the text and the token offsets.
    pub fn bytes(&self) -> usize {
        self.text.len() + self.ends.len() * 4 + self.parts.len() * 16
    }

    /// Where token `i` starts: the end of token `i - 1`, moved on to a character boundary.
    pub fn byte_at(&self, i: usize) -> usize {
        if i == 0 {
            return 0;
        }
        let mut at = self.ends.get(i - 1).map_or(self.text.len(), |e| *e as usize).min(self.text.len());
        while !self.text.is_char_boundary(at) {
            at += 1;
        }
        at
    }

    /// The text of tokens `from..to`.
    pub fn slice(&self, from: usize, to: usize) -> &str {
        &self.text[self.byte_at(from)..self.byte_at(to.max(from))]
    }

    /// The tokens of the text of tokens `from..to` followed by `tail` (a note), as the
    /// tokenizer counts the two together: only around the ends is it counted again; between
    /// the first and last places where the tokens split whatever surrounds them
    /// (`tokenize::split`), the document's own tokens are the text's.
    pub fn count_with(&self, from: usize, to: usize, tail: &str) -> usize {
        let (start, text) = (self.byte_at(from), self.slice(from, to));
        let enc = self.enc.name;
        let first = if start == 0 { Some(0) } else { tokenize::split::first_fixed(text) };
        let (Some(first), Some(last), true) = (first, tokenize::split::last_fixed(text), self.text.len() < u32::MAX as usize) else {
            return enc.count(&format!("{text}{tail}"));
        };
        let known = |at: usize| self.ends.partition_point(|e| (*e as usize) <= start + at);
        enc.count_until(text, first) + (known(last) - known(first)) + enc.count(&format!("{}{tail}", &text[last..]))
    }
}

/// The document to page for a result: its content parts' texts, joined as the model reads
/// them, or its structured content (or JSON output) pretty-printed when it has no content.
fn document(output: &ModelOutput, raw: Option<&Value>, enc: EncodingChoice) -> Doc {
    if let Some(parts) = raw.and_then(|r| r.get("content")).and_then(Value::as_array).filter(|p| !p.is_empty()) {
        let mut text = String::new();
        let mut ranges = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                text.push('\n');
            }
            let start = text.len();
            text.push_str(&output::part_text(part));
            ranges.push((start, text.len()));
        }
        // Structured content the model reads beside the parts is paged last.
        if let Some(json) = raw.and_then(output::joined_structured) {
            text.push('\n');
            let start = text.len();
            text.push_str(&json);
            ranges.push((start, text.len()));
        }
        let mut doc = Doc::new(text, enc);
        doc.parts = ranges;
        return doc;
    }
    let text = match output {
        ModelOutput::Json(v) | ModelOutput::ErrorJson(v) => serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()),
        other => other.text().into_owned(),
    };
    Doc::new(text, enc)
}

/// A result that was cut: what the model reads (the note included), and the whole to keep.
#[derive(Debug)]
pub struct Cut {
    /// The model's text: the first `shown` tokens and the note.
    pub output: ModelOutput,
    /// The tool's `CallToolResult` cut the same way, the note last (for a face that hands on
    /// results, not text: `toolreg mcp`), when the tool returned content parts.
    pub result: Option<Value>,
    pub shown: usize,
    pub doc: Doc,
    /// The ref the note names; `None` when the whole is larger than the shelf keeps.
    pub reference: Option<String>,
}

/// Whether `output` is over the budget; if it is, the cut, its note naming `reference` (the
/// ref it will be kept under). The model's text, note included, is within the budget by the
/// tokenizer's own count of it. `raw`: the tool's own result.
pub fn cut(output: &ModelOutput, raw: Option<&Value>, is_error: bool, budget: Budget, enc: EncodingChoice, reference: &str) -> Option<Cut> {
    let max = budget.max_tokens as usize;
    if max == 0 {
        return None;
    }
    let text = output.text();
    // A token is at least a byte: a text of no more bytes than the budget fits.
    if text.len() <= max {
        return None;
    }
    // Tokenized once: the document is the model's text unless the answer is JSON.
    let doc = document(output, raw, enc);
    let model_tokens = if doc.text == *text { doc.tokens() } else { enc.name.count(&text) };
    if model_tokens <= max || doc.tokens() <= max {
        return None;
    }
    let reference = (doc.bytes() + Shelf::OVERHEAD <= budget.keep_bytes).then(|| reference.to_string());
    // The head and the note are counted together: a cut inside a word or a character, and the
    // ref's digits, tokenize as they do, so the count is checked, not assumed.
    let mut shown = max.saturating_sub(NOTE_TOKENS).max(1);
    let (head, note) = loop {
        let note = note(reference.as_deref(), shown, doc.tokens(), budget.max_tokens);
        let over = doc.count_with(0, shown, &note).saturating_sub(max);
        if over == 0 || shown == 1 {
            break (doc.slice(0, shown).to_string(), note);
        }
        shown = shown.saturating_sub(over.max(4)).max(1);
    };
    let at = head.len();
    let result = raw.filter(|_| !doc.parts.is_empty()).map(|raw| {
        let mut result = cut_parts(raw, &doc, at);
        if let Some(parts) = result.get_mut("content").and_then(Value::as_array_mut) {
            parts.push(json!({"type": "text", "text": note.trim_start()}));
        }
        result
    });
    let text = format!("{head}{note}");
    let output = match output.media() {
        _ if is_error => ModelOutput::ErrorText(text),
        // The media kept within the budget stay beside the cut text (`media_budget`).
        media if !media.is_empty() => {
            let media = media.iter().filter(|p| p.is_media()).cloned();
            ModelOutput::Content(std::iter::once(output::Part::Text { text }).chain(media).collect())
        }
        _ => ModelOutput::Text(text),
    };
    Some(Cut { output, result, shown, doc, reference })
}

/// `raw`'s content parts up to byte `at` of the document: whole parts before it, the part
/// it falls in cut there (as text), the text parts after it left out; images, audio and
/// blobs are out of the budget and stay. Structured content is left out.
fn cut_parts(raw: &Value, doc: &Doc, at: usize) -> Value {
    let mut result = raw.clone();
    let Some(map) = result.as_object_mut() else { return result };
    map.remove("structuredContent");
    let parts = map.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut kept = Vec::with_capacity(parts.len() + 1);
    for (part, &(start, end)) in parts.into_iter().zip(&doc.parts) {
        let media = matches!(part.get("type").and_then(Value::as_str), Some("image" | "audio"))
            || part.get("resource").is_some_and(|r| r.get("blob").is_some());
        if end <= at || media {
            kept.push(part);
        } else if start < at {
            kept.push(json!({"type": "text", "text": &doc.text[start..at]}));
        }
    }
    map.insert("content".into(), Value::Array(kept));
    result
}

/// The note that ends a cut result (the model's text and a cut `CallToolResult` alike);
/// `reference`: `None` when the whole was too large to keep.
pub fn note(reference: Option<&str>, shown: usize, total: usize, max_tokens: u32) -> String {
    let head = format!(
        "[toolreg: this result is {total} tokens; the first {shown} are shown (the budget is {max_tokens} tokens per result) and {} are left out.",
        total - shown
    );
    match reference {
        Some(r) => format!("\n{head} Read on with tool_result_read {{\"ref\": \"{r}\", \"offset\": {shown}}}.]"),
        None => format!("\n{head} The whole result is larger than toolreg keeps (results.keepBytes), so it cannot be read on: ask the tool for less.]"),
    }
}

/// How a result was cut, for the face: the ref to read on with and the counts, and the cut
/// `CallToolResult` when the tool returned content parts.
#[derive(Clone, Debug, PartialEq)]
pub struct CutInfo {
    /// `None`: the whole was larger than the shelf keeps.
    pub reference: Option<String>,
    pub shown_tokens: usize,
    pub total_tokens: usize,
    pub result: Option<Value>,
}

/// Fits one call's answer to `budget`: over it, the output is cut and ends with the note, the
/// whole is kept on `shelf` for `owner`, and the cut is described. `None`: it fits as it is.
pub fn fit(shelf: &Shelf, owner: &str, tool: &str, output: &ModelOutput, raw: Option<&Value>, is_error: bool, budget: Budget, enc: EncodingChoice) -> Option<(ModelOutput, CutInfo)> {
    let reference = shelf::new_ref();
    Some(keep(shelf, owner, tool, cut(output, raw, is_error, budget, enc, &reference)?, budget))
}

/// Whether `output` may be over the budget: only then is it worth tokenizing (`cut`, CPU work
/// of up to seconds for megabytes, which a face runs off its reactor). A token is at least a
/// byte, so the model's text (`ModelOutput::text`) in no more bytes than the budget is within
/// it: `cut` says so without tokenizing, and so does this without building the text.
pub fn may_exceed(output: &ModelOutput, budget: Budget) -> bool {
    let max = budget.max_tokens as usize;
    budget.is_on()
        && match output {
            ModelOutput::Text(t) | ModelOutput::ErrorText(t) => t.len() > max,
            // The text parts joined by line feeds.
            ModelOutput::Content(parts) => parts.iter().filter_map(output::Part::text).map(|t| t.len() + 1).sum::<usize>() > max + 1,
            // Written compact, as `text` writes it, until it is past `max` bytes.
            ModelOutput::Json(v) | ModelOutput::ErrorJson(v) => serde_json::to_writer(Bytes { left: max }, v).is_err(),
        }
}

/// A writer that fails once more than `left` bytes are written to it.
struct Bytes {
    left: usize,
}

impl std::io::Write for Bytes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.left = self.left.checked_sub(buf.len()).ok_or(std::io::ErrorKind::WriteZero)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Keeps the whole of a cut answer on `shelf` for `owner`, under the ref its note names.
pub fn keep(shelf: &Shelf, owner: &str, tool: &str, cut: Cut, budget: Budget) -> (ModelOutput, CutInfo) {
    let Cut { output, result, shown, doc, reference } = cut;
    let total = doc.tokens();
    let reference = reference.filter(|r| shelf.keep_as(r, owner, tool, doc, budget.keep_bytes));
    (output, CutInfo { reference, shown_tokens: shown, total_tokens: total, result })
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod count_tests;
