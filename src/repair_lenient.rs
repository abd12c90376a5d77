//! Lenient JSON for `crate::repair`: a small hand-written tokenizer that rewrites
//! near-JSON (markdown fences, trailing commas, unquoted keys, single-quoted
//! strings, Python literals, comments, missing commas, raw control characters in
//! strings) into strict JSON, then parses it with serde_json. Anything it does not
//! understand makes the parse fail; it never guesses content.

use serde_json::Value;

/// Parse `text` as JSON, repairing it if needed. Fix names are appended to
/// `fixes` only when the parse succeeds.
pub(super) fn lenient_parse(text: &str, fixes: &mut Vec<String>) -> Option<Value> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    if let Ok(v) = serde_json::from_str(trimmed) {
        return Some(v);
    }
    let mut local = Vec::new();
    let mut body = trimmed;
    if let Some(inner) = strip_fence(trimmed) {
        local.push("stripped markdown code fence".to_string());
        body = inner;
        if let Ok(v) = serde_json::from_str(body) {
            fixes.append(&mut local);
            return Some(v);
        }
    }
    let tokens = tokenize(body, &mut local)?;
    let strict = emit(&tokens, &mut local)?;
    let value = serde_json::from_str(&strict).ok()?;
    for fix in local {
        if !fixes.contains(&fix) {
            fixes.push(fix);
        }
    }
    Some(value)
}

/// The content of the first markdown code fence (```lang ... ```), if any.
fn strip_fence(s: &str) -> Option<&str> {
    let start = s.find("```")?;
    let after = &s[start + 3..];
    // Skip an info string such as `json` up to the end of its line.
    let tag_len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(after.len());
    let rest = &after[tag_len..];
    let rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n')).unwrap_or(rest);
    let inner = match rest.find("```") {
        Some(end) => &rest[..end],
        None => rest,
    };
    let inner = inner.trim();
    (!inner.is_empty()).then_some(inner)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open(char),
    Close(char),
    Colon,
    Comma,
    /// A string already rendered as strict JSON (with its double quotes).
    Str(String),
    Num(String),
    Word(String),
}

fn tokenize(s: &str, fixes: &mut Vec<String>) -> Option<Vec<Tok>> {
    let chars: Vec<char> = s.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            _ if c.is_whitespace() => i += 1,
            '{' | '[' => {
                tokens.push(Tok::Open(c));
                i += 1;
            }
            '}' | ']' => {
                tokens.push(Tok::Close(c));
                i += 1;
            }
            ':' => {
                tokens.push(Tok::Colon);
                i += 1;
            }
            ',' => {
                tokens.push(Tok::Comma);
                i += 1;
            }
            '"' | '\'' => {
                let (tok, next) = read_string(&chars, i, fixes)?;
                tokens.push(tok);
                i = next;
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                push_fix(fixes, "removed comments");
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                let end = (i + 2..chars.len().saturating_sub(1)).find(|&j| chars[j] == '*' && chars[j + 1] == '/')?;
                i = end + 2;
                push_fix(fixes, "removed comments");
            }
            '-' | '0'..='9' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_digit() || matches!(chars[i], '-' | '+' | '.' | 'e' | 'E')) {
                    i += 1;
                }
                tokens.push(Tok::Num(chars[start..i].iter().collect()));
            }
            _ if c.is_alphabetic() || c == '_' || c == '$' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || matches!(chars[i], '_' | '$' | '-')) {
                    i += 1;
                }
                tokens.push(Tok::Word(chars[start..i].iter().collect()));
            }
            _ => return None,
        }
    }
    Some(tokens)
}

/// Read a double- or single-quoted string starting at `chars[start]`, returning it
/// as a strict JSON string token and the index after its closing quote.
fn read_string(chars: &[char], start: usize, fixes: &mut Vec<String>) -> Option<(Tok, usize)> {
    let quote = chars[start];
    if quote == '\'' {
        push_fix(fixes, "replaced single quotes with double quotes");
    }
    let mut out = String::from('"');
    let mut i = start + 1;
    loop {
        let c = *chars.get(i)?;
        match c {
            _ if c == quote => return Some((Tok::Str(out + "\""), i + 1)),
            '\\' => {
                let next = *chars.get(i + 1)?;
                if next == '\'' {
                    // `\'` is not a JSON escape; it only ever means an apostrophe.
                    out.push('\'');
                } else {
                    out.push('\\');
                    out.push(next);
                }
                i += 2;
                continue;
            }
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            _ if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            _ => out.push(c),
        }
        if (c as u32) < 0x20 {
            push_fix(fixes, "escaped control characters in strings");
        }
        i += 1;
    }
}

/// Re-emit tokens as strict JSON, fixing keys, literals and commas.
fn emit(tokens: &[Tok], fixes: &mut Vec<String>) -> Option<String> {
    let mut out = String::new();
    let mut prev: Option<&Tok> = None;
    for (idx, tok) in tokens.iter().enumerate() {
        let next = tokens.get(idx + 1);
        let is_key = next == Some(&Tok::Colon);
        let starts_value = matches!(tok, Tok::Open(_) | Tok::Str(_) | Tok::Num(_) | Tok::Word(_));
        let prev_ends_value = matches!(prev, Some(Tok::Close(_) | Tok::Str(_) | Tok::Num(_) | Tok::Word(_)));
        if starts_value && prev_ends_value {
            out.push(',');
            push_fix(fixes, "inserted missing commas");
        }
        match tok {
            Tok::Open(c) | Tok::Close(c) => out.push(*c),
            Tok::Colon => out.push(':'),
            Tok::Comma => {
                if matches!(next, Some(Tok::Close(_))) {
                    push_fix(fixes, "removed trailing commas");
                    prev = Some(tok);
                    continue;
                }
                out.push(',');
            }
            Tok::Str(s) => out.push_str(s),
            Tok::Num(n) => {
                if is_key {
                    out.push_str(&serde_json::to_string(n).ok()?);
                    push_fix(fixes, "quoted unquoted keys");
                } else {
                    out.push_str(n);
                }
            }
            Tok::Word(w) => {
                if is_key {
                    out.push_str(&serde_json::to_string(w).ok()?);
                    push_fix(fixes, "quoted unquoted keys");
                } else {
                    let literal = match w.as_str() {
                        "true" | "false" | "null" => w.as_str(),
                        "True" => "true",
                        "False" => "false",
                        "None" => "null",
                        _ => return None,
                    };
                    if literal != w {
                        push_fix(fixes, "converted Python literals");
                    }
                    out.push_str(literal);
                }
            }
        }
        prev = Some(tok);
    }
    Some(out)
}

fn push_fix(fixes: &mut Vec<String>, fix: &str) {
    if !fixes.iter().any(|f| f == fix) {
        fixes.push(fix.to_string());
    }
}
