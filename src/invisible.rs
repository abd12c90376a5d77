//! Invisible text: the characters a model reads but a person does not see (tag block, bidi
//! controls, zero-width and other format characters), and how to show them to a person. A leaf:
//! the catalog matches tool names the host was shown with it, the registry cleans whole
//! definitions with it (`registry::hidden`).

use std::borrow::Cow;
use std::fmt::Write;

/// Invisible or direction-changing: the tag block, bidi controls and marks, zero-width and
/// other format characters, variation selectors, invisible fillers, and control characters
/// other than tab, newline and carriage return.
pub fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{ad}'                    // soft hyphen
        | '\u{34f}'                   // combining grapheme joiner
        | '\u{61c}'                   // Arabic letter mark
        | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' // Hangul fillers
        | '\u{17b4}' | '\u{17b5}'     // Khmer invisible vowels
        | '\u{180b}'..='\u{180f}'     // Mongolian selectors and vowel separator
        | '\u{200b}'..='\u{200f}'     // zero-width space/joiners, LRM, RLM
        | '\u{202a}'..='\u{202e}'     // bidi embeddings and overrides
        | '\u{2060}'..='\u{206f}'     // word joiner, invisible operators, bidi isolates
        | '\u{fe00}'..='\u{fe0f}'     // variation selectors
        | '\u{feff}'                  // zero-width no-break space (BOM)
        | '\u{fff9}'..='\u{fffb}'     // interlinear annotation
        | '\u{1bca0}'..='\u{1bca3}'   // shorthand format controls
        | '\u{1d173}'..='\u{1d17a}'   // musical format controls
        | '\u{e0000}'..='\u{e007f}'   // tag block
        | '\u{e0100}'..='\u{e01ef}'   // variation selectors supplement
    )
}

/// `s` without hidden characters.
pub fn cleaned(s: &str) -> String {
    s.chars().filter(|c| !is_hidden(*c)).collect()
}

/// `s` with each hidden character written as `\u{XXXX}`, for a person to read; borrowed when
/// there is none.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_hidden(c) {
            let _ = write!(out, "\\u{{{:X}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether a tool name the host configured (`disabledTools`, `approvalTools`) names `tool`:
/// as the server spells it, or as `catalog/listTools` showed it.
pub fn names(listed: &str, tool: &str) -> bool {
    listed == tool || visible(tool) == listed
}
