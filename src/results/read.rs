//! `tool_result_read`: the meta-tool that pages through a kept result by tokens.

use super::{Budget, Shelf, NOTE_TOKENS};
use serde_json::{json, Value};

pub const READ: &str = "tool_result_read";

/// What the model reads of a page (`text`), whether it is a refusal, and the page's place
/// (`raw`: ref, offset, next, totalTokens) for the host.
#[derive(Debug)]
pub struct Page {
    pub text: String,
    pub is_error: bool,
    pub raw: Option<Value>,
}

impl Page {
    fn refusal(text: String) -> Page {
        Page { text, is_error: true, raw: None }
    }
}

/// Its definition (name, description, input schema), as every plan with a budget offers it.
pub fn definition() -> (&'static str, &'static str, Value) {
    (
        READ, "Read more of a tool result that was cut to fit your context: a cut result \
ends with a note giving its ref and the offset to read from. Returns the next tokens of the \
whole result and where the page after starts.",
        json!({
            "type": "object",
            "properties": {
                "ref": {"type": "string", "description": "The ref the cut result's note gives."},
                "offset": {"type": "integer", "minimum": 0, "description": "The token to start at (the note's offset; default 0)."},
                "maxTokens": {"type": "integer", "minimum": 1, "description": "Tokens to read at most (default and most: the result budget)."}
            },
            "required": ["ref"],
            "additionalProperties": false
        }),
    )
}

/// Arguments as the model sent them, or why they cannot be read.
fn args(arguments: &Value) -> Result<(String, usize, Option<usize>), String> {
    let arguments = match arguments {
        Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
        other => other.clone(),
    };
    let Some(reference) = arguments.get("ref").and_then(Value::as_str) else {
        return Err("Invalid arguments for tool_result_read: expected {\"ref\": string, \"offset\"?: integer, \"maxTokens\"?: integer}, with the ref a cut result's note gives.".into());
    };
    let number = |key: &str, min: u64| match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64().or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64)) {
            Some(n) if n >= min => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
            _ => Err(format!("Invalid arguments for tool_result_read: {key} must be an integer of at least {min}.")),
        },
    };
    Ok((reference.to_string(), number("offset", 0)?.unwrap_or(0), number("maxTokens", 1)?))
}

/// One page of the result `arguments` name, if one of `readers` may read it.
pub fn page(shelf: &Shelf, readers: &[&str], arguments: &Value, budget: Budget) -> Page {
    let (reference, offset, max) = match args(arguments) {
        Ok(a) => a,
        Err(why) => return Page::refusal(why),
    };
    let Some(found) = shelf.get(&reference, readers) else {
        return Page::refusal(format!(
            "No kept result has the ref {reference:?} here: results are kept for a while only (the least recently read go first, all of them when toolreg stops) and only for the conversation that made them. Call the tool again for a fresh result."
        ));
    };
    let doc = &found.doc;
    let total = doc.tokens();
    if offset >= total {
        return Page::refusal(format!("offset {offset} is past the end of the result of {} ({total} tokens): read from 0 to {}.", found.tool, total.saturating_sub(1)));
    }
    let most = (budget.max_tokens as usize).saturating_sub(NOTE_TOKENS).max(1);
    let mut end = (offset + max.unwrap_or(most).min(most)).min(total);
    // The page and its note are counted together, as the model's tokenizer reads them.
    let text = loop {
        let note = page_note(doc, &reference, &found.tool, offset, end);
        let over = doc.count_with(offset, end, &note).saturating_sub(budget.max_tokens as usize);
        if over == 0 || end <= offset + 1 {
            break format!("{}{note}", doc.slice(offset, end));
        }
        end = end.saturating_sub(over.max(4)).max(offset + 1);
    };
    let raw = json!({"ref": reference, "offset": offset, "next": (end < total).then_some(end), "totalTokens": total});
    Page { text, is_error: false, raw: Some(raw) }
}

/// The note after tokens `offset..end` of `doc`: where the next page starts.
fn page_note(doc: &super::Doc, reference: &str, tool: &str, offset: usize, end: usize) -> String {
    let total = doc.tokens();
    if end < total {
        format!(
            "\n[toolreg: tokens {offset} to {end} of {total} of the result of {tool}; {} left. Next page: tool_result_read {{\"ref\": \"{reference}\", \"offset\": {end}}}.]",
            total - end
        )
    } else {
        format!("\n[toolreg: tokens {offset} to {end} of {total} of the result of {tool}: the end of the result.]")
    }
}
