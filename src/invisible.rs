//! Invisible text: the characters a model reads but a person does not see (tag block, bidi
//! controls, zero-width and other format characters), and how to show them to a person. A leaf:
//! the catalog matches tool names the host was shown with it, the registry cleans whole
//! definitions with it (`registry::hidden`), and the faces show a person what they review with it
//! (`show`, `shown`, `own_name`).

use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
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

/// Whether any string or key of `v`, at any depth, has a hidden character.
pub fn has_hidden(v: &Value) -> bool {
    let hidden = |s: &str| s.chars().any(is_hidden);
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if hidden(s) => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (k, x) in map {
                    if hidden(k) {
                        return true;
                    }
                    stack.push(x);
                }
            }
            _ => {}
        }
    }
    false
}

/// Every string and key of `v` in `visible` form, for a person to read. Returns how many
/// strings and keys changed.
pub fn show(v: &mut Value) -> usize {
    if !has_hidden(v) {
        return 0;
    }
    let mut shown = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => {
                if let Cow::Owned(o) = visible(s) {
                    *s = o;
                    shown += 1;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => {
                if map.keys().any(|k| k.chars().any(is_hidden)) {
                    // A plain key that spells an escape out keeps its name; the hidden one it
                    // reads like is marked beside it rather than overwriting it.
                    let plain: HashSet<String> = map.keys().filter(|k| !k.chars().any(is_hidden)).cloned().collect();
                    for (k, x) in std::mem::take(map) {
                        let mut key = visible(&k).into_owned();
                        if key != k {
                            shown += 1;
                            while plain.contains(&key) || map.contains_key(&key) {
                                key.push_str(" (again)");
                            }
                        }
                        map.insert(key, x);
                    }
                }
                stack.extend(map.values_mut());
            }
            _ => {}
        }
    }
    shown
}

/// `t` with every string and key in `visible` form (through its JSON shape, so a field added
/// later is covered too); `t` itself when it has no hidden character.
pub fn shown<T: serde::Serialize + serde::de::DeserializeOwned>(t: T) -> T {
    let Ok(mut v) = serde_json::to_value(&t) else { return t };
    if show(&mut v) == 0 {
        return t;
    }
    // Strings stay strings, so the shape still fits.
    serde_json::from_value(v).unwrap_or(t)
}

/// The one of `names` that `given` is: itself, or the only one whose `visible` form it is (a
/// host sends back what it was shown).
pub fn own_name<'a: 'b, 'b>(names: impl IntoIterator<Item = &'a str> + Clone, given: &'b str) -> &'b str {
    if names.clone().into_iter().any(|n| n == given) {
        return given;
    }
    let mut shown_as = names.into_iter().filter(|n| visible(n) == given);
    match (shown_as.next(), shown_as.next()) {
        (Some(n), None) => n,
        _ => given,
    }
}

