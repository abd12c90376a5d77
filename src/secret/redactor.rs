//! Secret values redacted from the log, whoever prints them: an MCP server's stderr, its error
//! text, a tool name it sent, a dependency's message.
//!
//! Invariants:
//! - Each server registers the values toolreg knows for it as a `Redactor` (its config's env and
//!   header values, URL userinfo and query values, OAuth client secret: `ServerConfig::secret_values`;
//!   its OAuth tokens, set again whenever they change: `TokenStore`). A registration lives as long
//!   as a clone of it does: the session, the stderr drain (to the child's EOF), the server's auth.
//! - The log writer (`logging.rs`) passes every line through `logged`: all live registrations'
//!   values, longest first, become `[redacted]`. It is a property of the log, not of a call site.
//! - A value shorter than `MIN_LOGGED` bytes is not redacted from the log: it is no credential
//!   (NIST SP 800-63B asks 8 characters of a password; API keys and tokens are longer), it is most
//!   likely an ordinary setting (`DEBUG=1`, `PORT=8080`, `LOG=info`) whose every occurrence in
//!   every line would be garbled, and its redaction would disclose it anyway (the context around
//!   `port [redacted]` says what stood there).
//! - A line cut short (stderr lines are capped) loses its tail that could be the start of a
//!   value (`cut_partial`), so a secret straddling the cut never leaks its first half.
//! - Not recognised: a secret toolreg was never told (one a server reads from its own files), a
//!   value transformed (base64, a hash, split by the server's own formatting), args (not secrets
//!   by contract: put credentials in `env` or `headers`).

use std::borrow::Cow;
use std::sync::{Arc, OnceLock, RwLock, Weak};

use super::REDACTED;

/// The shortest value redacted from the log (see the module docs for why).
pub const MIN_LOGGED: usize = 8;

type Values = RwLock<Vec<String>>;

/// One server's secret values, redacted from every log line while a clone of it lives.
#[derive(Clone)]
pub struct Redactor(Arc<Values>);

fn live() -> &'static RwLock<Vec<Weak<Values>>> {
    static LIVE: OnceLock<RwLock<Vec<Weak<Values>>>> = OnceLock::new();
    LIVE.get_or_init(RwLock::default)
}

impl Redactor {
    pub fn new(values: impl IntoIterator<Item = String>) -> Redactor {
        let own = Arc::new(RwLock::new(forms(values)));
        let mut all = live().write().unwrap_or_else(|e| e.into_inner());
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(&own));
        Redactor(own)
    }

    /// Replaces the values (new OAuth tokens); the old ones are no longer secret to us.
    pub fn set(&self, values: impl IntoIterator<Item = String>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = forms(values);
    }
}

/// The values long enough to redact, each also as `Debug` and JSON escape it (a log field
/// printed with `?` quotes its text escaped), deduplicated.
fn forms(values: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values.into_iter().filter(|v| v.len() >= MIN_LOGGED) {
        let debug = v.escape_debug().to_string();
        let json = serde_json::to_string(&v).map(|j| j[1..j.len() - 1].to_owned()).unwrap_or_default();
        out.extend([debug, json].into_iter().filter(|f| *f != v && f.len() >= MIN_LOGGED));
        out.push(v);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Calls `f` with every live value.
fn each_value(mut f: impl FnMut(&str)) {
    let all = live().read().unwrap_or_else(|e| e.into_inner());
    for values in all.iter().filter_map(Weak::upgrade) {
        for v in values.read().unwrap_or_else(|e| e.into_inner()).iter() {
            f(v);
        }
    }
}

/// `text` with every live secret value replaced by `[redacted]`.
pub fn logged(text: &str) -> Cow<'_, str> {
    let mut found: Vec<String> = Vec::new();
    each_value(|v| {
        if text.contains(v) {
            found.push(v.to_owned());
        }
    });
    scrub(text, found)
}

/// `text` with each of `values` replaced, longest first (so a value inside another one does not
/// leave the longer one's rest behind).
pub fn scrub(text: &str, mut values: Vec<String>) -> Cow<'_, str> {
    values.retain(|v| !v.is_empty() && text.contains(v.as_str()));
    if values.is_empty() {
        return Cow::Borrowed(text);
    }
    values.sort_unstable_by_key(|v| std::cmp::Reverse(v.len()));
    let mut out = text.to_owned();
    for v in values {
        out = out.replace(&v, REDACTED);
    }
    Cow::Owned(out)
}

/// `text` without its longest tail that begins a live secret value: the rest of the value was
/// cut off, so no whole-value match can see it.
pub fn cut_partial(text: &str) -> &str {
    let mut cut = text.len();
    each_value(|v| {
        // Only a proper prefix: a whole value was already redacted.
        let from = text.len().saturating_sub(v.len() - 1);
        for (i, _) in text[..].char_indices().skip_while(|(i, _)| *i < from) {
            if v.starts_with(&text[i..]) {
                cut = cut.min(i);
                break;
            }
        }
    });
    &text[..cut]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_values_are_redacted_longest_first_and_only_while_registered() {
        let r = Redactor::new(["unit-AAAA-1111".to_owned(), "unit-AAAA-1111-2222".to_owned(), "short".to_owned()]);
        let text = "key unit-AAAA-1111-2222, other unit-AAAA-1111, short stays";
        assert_eq!(logged(text), "key [redacted], other [redacted], short stays");
        assert_eq!(logged(r#"as debug "unit\"BBBB\"3333""#), r#"as debug "unit\"BBBB\"3333""#);
        r.set(["unit\"BBBB\"3333".to_owned()]);
        assert_eq!(logged(r#"as debug "unit\"BBBB\"3333""#), r#"as debug "[redacted]""#);
        assert_eq!(logged("old unit-AAAA-1111"), "old unit-AAAA-1111", "replaced values are no longer redacted");
        drop(r);
        assert_eq!(logged(r#"gone "unit\"BBBB\"3333""#), r#"gone "unit\"BBBB\"3333""#);
    }

    #[test]
    fn a_cut_line_loses_the_start_of_a_value() {
        let _r = Redactor::new(["unit-CCCC-4444".to_owned()]);
        assert_eq!(cut_partial("line ends in unit-CC"), "line ends in ");
        assert_eq!(cut_partial("line ends in u"), "line ends in ");
        assert_eq!(cut_partial("line ends in x"), "line ends in x");
        assert_eq!(cut_partial("é unit-CCCC-444"), "é ");
    }
}
