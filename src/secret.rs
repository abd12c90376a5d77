//! Secrets the host hands us to pass on: env values of stdio servers, HTTP header values, and
//! credentials inside URLs (userinfo, query and fragment values).
//!
//! Invariant: a secret-bearing value is a type whose `Debug` and `Display` are redacted, so no
//! `{:?}`, `%field` or error message can print it; the raw text comes out only through an
//! explicit `expose()` at the one place it is used (spawning a child, building a request).
//! Foreign error text (reqwest, rmcp) may quote a URL; `redact_urls_in` scrubs such text where
//! it enters the catalog. On the wire both types are plain strings (serde transparent, same
//! JSON Schema), so the host protocol is unchanged. What a server prints of them is redacted from
//! the log by `redactor`.

pub mod redactor;
pub mod reference;

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

/// What a redacted value prints as.
pub const REDACTED: &str = "[redacted]";

/// A value that is never printed: env values, header values.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The raw value, for the one place that must hand it on.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// A URL that may carry credentials; it prints with userinfo and query/fragment values
/// redacted (`https://[redacted]@host/path?token=[redacted]`).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SecretUrl(String);

impl SecretUrl {
    pub fn new(url: impl Into<String>) -> SecretUrl {
        SecretUrl(url.into())
    }

    /// The raw URL, for the one place that connects to it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// How the server is reached, without credentials: scheme, host, port, path and the
    /// query's keys (a changed token keeps the identity; a changed endpoint does not).
    pub fn redacted(&self) -> String {
        redact_url(&self.0)
    }

    /// The credentials inside: userinfo (whole and its password), every query and fragment
    /// value, each also percent-decoded (a server may print either).
    pub fn secret_parts(&self) -> Vec<String> {
        let url = &self.0;
        let Some(scheme_end) = url.find("://") else { return Vec::new() };
        let rest = &url[scheme_end + 3..];
        let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let mut parts: Vec<&str> = Vec::new();
        if let Some(at) = rest[..auth_end].rfind('@') {
            let userinfo = &rest[..at];
            parts.push(userinfo);
            parts.extend(userinfo.split_once(':').map(|(_, pass)| pass));
        }
        let tail = &rest[auth_end..];
        if let Some(q) = tail.find(['?', '#']) {
            for pair in tail[q + 1..].split(['&', '#']) {
                parts.push(pair.split_once('=').map_or(pair, |(_, v)| v));
            }
        }
        let mut out: Vec<String> = Vec::new();
        for p in parts.into_iter().filter(|p| !p.is_empty()) {
            out.push(p.to_owned());
            out.push(percent_decode(p));
        }
        out.dedup();
        out
    }
}

/// One credential as a server may print it decoded: `%XX` escapes and `+` (a space in a query,
/// as `form_urlencoded` reads it) decoded; bytes that are not UTF-8 replaced; a `%` that begins
/// no escape kept. Each value alone, not a query: a value may hold `=` or `&` once decoded.
fn percent_decode(text: &str) -> String {
    let spaced = text.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", redact_url(&self.0))
    }
}

impl fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact_url(&self.0))
    }
}

// Both are plain strings in the schema, exactly like the `String` they replaced.
macro_rules! string_schema {
    ($t:ty) => {
        impl JsonSchema for $t {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> Cow<'static, str> {
                String::schema_name()
            }
            fn json_schema(generator: &mut SchemaGenerator) -> Schema {
                String::json_schema(generator)
            }
        }
    };
}
string_schema!(Secret);
string_schema!(SecretUrl);

/// `scheme://user:pass@host/path?k=v#frag` with the userinfo replaced and every query and
/// fragment value redacted (a parameter without `=` may itself be a token: redacted whole).
/// Text without `://` is returned as is.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest_start = scheme_end + 3;
    let rest = &url[rest_start..];
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let mut out = String::with_capacity(url.len());
    out.push_str(&url[..rest_start]);
    let authority = &rest[..auth_end];
    match authority.rfind('@') {
        Some(at) => {
            out.push_str(REDACTED);
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    let tail = &rest[auth_end..];
    let path_end = tail.find(['?', '#']).unwrap_or(tail.len());
    out.push_str(&tail[..path_end]);
    let mut tail = &tail[path_end..];
    while let Some(sep) = tail.chars().next() {
        // `?query` then `#fragment`: each is a list of `key=value` pairs.
        let body = &tail[1..];
        let end = if sep == '?' { body.find('#').unwrap_or(body.len()) } else { body.len() };
        out.push(sep);
        let pairs: Vec<String> = body[..end]
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) => format!("{k}={REDACTED}"),
                None if pair.is_empty() => String::new(),
                None => REDACTED.to_owned(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
        tail = &body[end..];
    }
    out
}

/// Every `scheme://…` in free text (an error message) passed through `redact_url`. A URL ends
/// at whitespace, a quote, a bracket or `<>`; trailing punctuation stays outside it.
pub fn redact_urls_in(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let is_scheme = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.');
    let ends_url = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>' | '(' | ')' | '[' | ']' | '{' | '}');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(sep) = rest.find("://") {
        let start = rest[..sep].rfind(|c: char| !is_scheme(c)).map_or(0, |i| i + rest[i..].chars().next().map_or(1, char::len_utf8));
        let after = &rest[sep + 3..];
        let mut len = after.find(ends_url).unwrap_or(after.len());
        while len > 0 && after[..len].ends_with([',', '.', ':', ';']) {
            len -= 1;
        }
        out.push_str(&rest[..start]);
        out.push_str(&redact_url(&rest[start..sep + 3 + len]));
        rest = &after[len..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print_and_keep_their_wire_form() {
        let s: Secret = serde_json::from_str(r#""sk-live-1""#).unwrap();
        assert_eq!((format!("{s:?}"), s.to_string(), s.expose()), ("[redacted]".into(), "[redacted]".into(), "sk-live-1"));
        assert_eq!(serde_json::to_string(&s).unwrap(), r#""sk-live-1""#);
        let schema = serde_json::to_value(schemars::schema_for!(Secret)).unwrap();
        assert_eq!(schema["type"], "string");
    }

    #[test]
    fn urls_lose_userinfo_and_query_values() {
        let cases = [
            ("https://u:p@h:1/a/b?token=x&mode=y#k=z", "https://[redacted]@h:1/a/b?token=[redacted]&mode=[redacted]#k=[redacted]"),
            ("http://h/mcp", "http://h/mcp"),
            ("http://h?bare", "http://h?[redacted]"),
            ("http://a@b@h/p", "http://[redacted]@h/p"),
            ("not a url", "not a url"),
        ];
        for (url, want) in cases {
            assert_eq!(redact_url(url), want, "{url}");
        }
        let u = SecretUrl::new("http://user:S3@127.0.0.1:9/mcp?token=S4");
        assert!(!format!("{u} {u:?} {}", u.redacted()).contains('S'));
        let u = SecretUrl::new("https://me:p%40ss@h/p?token=a%2Bb+c&bare#frag=f");
        assert_eq!(u.secret_parts(), ["me:p%40ss", "me:p@ss", "p%40ss", "p@ss", "a%2Bb+c", "a+b c", "bare", "f"]);
        assert!(SecretUrl::new("http://h/mcp").secret_parts().is_empty());
    }

    #[test]
    fn percent_decoding_as_in_a_query() {
        let decoded = ["a%20b+c%2", "%C3%A9%2b%2B", "%zz%4%", "%+1", "a%ffb", ""].map(percent_decode);
        // `+` a space, escapes in either case; a `%` that begins no escape is kept as written;
        // bytes that are not UTF-8 are replaced.
        assert_eq!(decoded, ["a b c%2", "é++", "%zz%4%", "% 1", "a\u{fffd}b", ""]);
    }

    #[test]
    fn urls_in_error_text_are_redacted() {
        let text = "error sending request for url (http://127.0.0.1:9/mcp?token=S4): connect: refused, see https://u:S3@x/y.";
        assert_eq!(
            redact_urls_in(text),
            "error sending request for url (http://127.0.0.1:9/mcp?token=[redacted]): connect: refused, see https://[redacted]@x/y."
        );
        assert!(matches!(redact_urls_in("no url here"), Cow::Borrowed(_)));
        assert_eq!(redact_urls_in("é→http://h?t=1"), "é→http://h?t=[redacted]");
    }
}
