//! JSON-RPC messages as bytes: what an incoming body is, learnt from one borrowed parse, and
//! response bodies written around the request's id.
//!
//! A body is parsed once, shallowly: `Probe` borrows `id`, `method`, `params`, `result` and
//! `error` as raw JSON text (serde_json skips nested values iteratively, so a body nested
//! deeper than the recursion limit still yields its id). Params are deserialised once, by the
//! handler, from the raw slice. An id is kept as its exact text and echoed back byte for byte:
//! any integer (negative, beyond 64 bits) or string works.

use crate::protocol::error::clip;
use crate::protocol::{ErrorCode, RpcError};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

/// A request id: its exact JSON text (echoed) and a key that identifies it (`"a"` and
/// `"\u0061"` are the same id).
#[derive(Clone, Debug)]
pub struct Id {
    raw: Bytes,
    key: IdKey,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IdKey {
    Int(Box<str>),
    Str(Box<str>),
}

impl Id {
    /// `raw` must be one JSON value (as `RawValue` gives it). `None` unless an integer or a string.
    pub fn parse(raw: Bytes) -> Option<Id> {
        let key = match raw.first()? {
            b'"' => IdKey::Str(serde_json::from_slice::<String>(&raw).ok()?.into()),
            b'-' | b'0'..=b'9' => {
                let digits = raw.strip_prefix(b"-").unwrap_or(&raw);
                if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                    return None; // a fraction or an exponent
                }
                // JSON integers have no leading zeros, so the text is canonical but for -0.
                let text = if &raw[..] == b"-0" { "0" } else { std::str::from_utf8(&raw).ok()? };
                IdKey::Int(text.into())
            }
            _ => return None,
        };
        Some(Id { raw, key })
    }

    pub fn key(&self) -> &IdKey {
        &self.key
    }

    /// The id as it was sent.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// For logs and error messages: cut.
    pub fn display(&self) -> String {
        clip(&String::from_utf8_lossy(&self.raw)).into_owned()
    }
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The top level of a message; nested values stay unparsed. A member that is present but
/// `null` is `Some("null")`, absent is `None`.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// What a body is.
pub enum Incoming {
    Request { id: Id, method: String, params: Option<Bytes> },
    Notification { method: String, params: Option<Bytes> },
    /// The host's answer to one of our requests. `id` is `None` when it is `null` or not an id.
    Response { id: Option<Id>, result: Result<Bytes, RpcError> },
    /// To be answered with this error, to `id` when one could be read.
    Invalid { id: Option<Id>, error: RpcError },
}

/// `params` of `null` means none; the slices share `body`'s buffer.
pub fn classify(body: &Bytes) -> Incoming {
    // serde would read a struct from an array too (by position): only an object is a message.
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        let e = serde_json::from_slice::<serde::de::IgnoredAny>(body).err();
        return Incoming::Invalid { id: None, error: not_a_message(body, e) };
    }
    let probe: Probe = match serde_json::from_slice(body) {
        Ok(p) => p,
        Err(e) => return Incoming::Invalid { id: None, error: not_a_message(body, Some(e)) },
    };
    let slice = |raw: &RawValue| body.slice_ref(raw.get().as_bytes());
    // Present but not an id (null, 1.5, an object) is `Some(None)`.
    let id = probe.id.map(|raw| Id::parse(slice(raw)));
    let invalid = |id: Option<Id>, why: &str| Incoming::Invalid { id, error: RpcError::new(ErrorCode::INVALID_REQUEST, why) };

    // A response is never answered, whatever is wrong with it: the caller logs and drops it.
    if probe.method.is_none() && (probe.result.is_some() || probe.error.is_some()) {
        let result = match probe.error {
            Some(e) => Err(host_error(e)),
            None => Ok(probe.result.map(slice).unwrap_or_else(|| Bytes::from_static(b"null"))),
        };
        return Incoming::Response { id: id.flatten(), result };
    }
    let id = match id {
        None => None,
        Some(Some(id)) => Some(id),
        Some(None) => return invalid(None, "\"id\" must be a string or an integer"),
    };
    if probe.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return invalid(id, "\"jsonrpc\" must be \"2.0\"");
    }
    let Some(method) = probe.method else {
        return invalid(id, "a message needs a \"method\", or a \"result\" or \"error\"");
    };
    let Ok(method) = serde_json::from_str::<String>(method.get()) else {
        return invalid(id, "\"method\" must be a string");
    };
    let params = probe.params.filter(|p| p.get() != "null").map(slice);
    match id {
        Some(id) => Incoming::Request { id, method, params },
        None => Incoming::Notification { method, params },
    }
}

/// Why a body is not a message: bad JSON (-32700), or JSON that is not one object (-32600).
/// `e` is the error met so far, if any. The second parse runs only on this error path.
fn not_a_message(body: &[u8], e: Option<serde_json::Error>) -> RpcError {
    use serde_json::error::Category;
    let why_not = e.as_ref().map(|e| e.to_string()).unwrap_or_default();
    let syntax = match e.as_ref().map(serde_json::Error::classify) {
        Some(Category::Syntax | Category::Eof | Category::Io) => e,
        _ => serde_json::from_slice::<serde::de::IgnoredAny>(body).err(),
    };
    if let Some(e) = syntax {
        let message = e.to_string();
        return RpcError::new(ErrorCode::PARSE_ERROR, format!("invalid JSON: {message}"))
            .with_data(serde_json::json!({"error": clip(&message), "line": e.line(), "column": e.column()}));
    }
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    let why = match first {
        Some(b'[') => "batches are not supported".to_string(),
        Some(b'{') => format!("not a JSON-RPC message: {why_not}"), // e.g. a duplicate member
        _ => "a message must be a JSON object".to_string(),
    };
    RpcError::new(ErrorCode::INVALID_REQUEST, why)
}

/// The host's `error` member, read leniently: it is only passed on to a waiting caller.
fn host_error(raw: &RawValue) -> RpcError {
    #[derive(Deserialize, Default)]
    struct Wire {
        code: Option<i64>,
        message: Option<String>,
        data: Option<serde_json::Value>,
    }
    let w: Wire = serde_json::from_str(raw.get()).unwrap_or_default();
    RpcError {
        code: w.code.and_then(|c| i32::try_from(c).ok()).unwrap_or(ErrorCode::INTERNAL_ERROR.0),
        message: w.message.unwrap_or_default(),
        data: w.data,
    }
}

/// A response body: the id's exact text (or `null`) and the result, serialised once.
pub fn success(id: &Id, result: &impl serde::Serialize) -> Result<Bytes, serde_json::Error> {
    let mut body = Vec::with_capacity(64);
    body.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    body.extend_from_slice(id.raw());
    body.extend_from_slice(b",\"result\":");
    serde_json::to_writer(&mut body, result)?;
    body.push(b'}');
    Ok(Bytes::from(body))
}

pub fn failure(id: Option<&Id>, error: &RpcError) -> Bytes {
    let mut body = Vec::with_capacity(128);
    body.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    body.extend_from_slice(id.map_or(&b"null"[..], Id::raw));
    body.extend_from_slice(b",\"error\":");
    serde_json::to_writer(&mut body, error).expect("an RpcError serialises");
    body.push(b'}');
    Bytes::from(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> Option<IdKey> {
        Id::parse(Bytes::copy_from_slice(s.as_bytes())).map(|i| i.key)
    }

    #[test]
    fn ids_are_integers_or_strings_of_any_size() {
        assert_eq!(id("-5"), Some(IdKey::Int("-5".into())));
        assert_eq!(id("-9223372036854775808"), Some(IdKey::Int("-9223372036854775808".into())));
        assert_eq!(id("123456789012345678901234567890"), Some(IdKey::Int("123456789012345678901234567890".into())));
        assert_eq!(id("-0"), id("0"));
        assert_eq!(id(r#""\u0061""#), id(r#""a""#));
        for bad in ["1.5", "1e3", "-", "null", "true", "{}", "[1]"] {
            assert_eq!(id(bad), None, "{bad}");
        }
    }

    #[test]
    fn bodies_echo_the_id_text() {
        let body = Bytes::from_static(br#"{"jsonrpc":"2.0","id":-5,"method":"m","params":{"a":[1]}}"#);
        let Incoming::Request { id, method, params } = classify(&body) else { panic!("a request") };
        assert_eq!((method.as_str(), params.as_deref()), ("m", Some(&br#"{"a":[1]}"#[..])));
        assert_eq!(&success(&id, &1).unwrap()[..], br#"{"jsonrpc":"2.0","id":-5,"result":1}"#);
    }

    #[test]
    fn deep_params_keep_the_id() {
        let deep = format!(r#"{{"jsonrpc":"2.0","id":"d","method":"m","params":{}{}}}"#, "[".repeat(1000), "]".repeat(1000));
        let Incoming::Request { id, .. } = classify(&Bytes::from(deep)) else { panic!("a request") };
        assert_eq!(id.key, IdKey::Str("d".into()));
    }

    #[test]
    fn responses_and_bad_messages() {
        let r = classify(&Bytes::from_static(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#));
        assert!(matches!(r, Incoming::Response { id: None, result: Err(RpcError { code: -32700, .. }) }));
        let code = |s: &'static [u8]| match classify(&Bytes::from_static(s)) {
            Incoming::Invalid { error, .. } => error.code,
            _ => 0,
        };
        assert_eq!(code(b"{\"id\":1,"), -32700);
        assert_eq!(code(b"[1,2"), -32700);
        assert_eq!(code(b"[1,2]"), -32600);
        assert_eq!(code(b"\"s\""), -32600);
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#), -32600);
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":1,"method":7}"#), -32600);
    }
}
