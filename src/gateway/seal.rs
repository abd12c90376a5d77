//! Sealed `requestState` (MCP 2026-07-28 multi round-trip requests): what the gateway hands a
//! client to echo back on its retry. The client may read it (base64url JSON) but cannot alter
//! it: an HMAC-SHA256 under a key of 32 random bytes made at start covers the text, so a state
//! lives as long as the process. Each state names its purpose (which tool, which question) and
//! an expiry; `open` refuses one made for another purpose, expired, or altered. Nothing secret
//! goes in (ids and digests only), since sealing is not encryption.

use data_encoding::BASE64URL_NOPAD;
use ring::hmac;
use serde_json::{json, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub struct Sealer {
    key: hmac::Key,
}

/// The refusal of a state sealed for another purpose (another tool, or another kind of state).
pub const OTHER_PURPOSE: &str = "the requestState belongs to another call";

/// Why a state is refused; the text is for the client.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub String);

impl Sealer {
    pub fn new() -> Result<Sealer, String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the requestState key: {e}"))?;
        Ok(Sealer { key: hmac::Key::new(hmac::HMAC_SHA256, &bytes) })
    }

    /// `body.tag`: the JSON `{purpose, expires (ms since the epoch), value}` and its MAC.
    pub fn seal(&self, purpose: &str, value: Value, ttl: Duration) -> String {
        let expires = now_ms().saturating_add(ttl.as_millis() as u64);
        let body = BASE64URL_NOPAD.encode(json!({"purpose": purpose, "expires": expires, "value": value}).to_string().as_bytes());
        let tag = BASE64URL_NOPAD.encode(hmac::sign(&self.key, body.as_bytes()).as_ref());
        format!("{body}.{tag}")
    }

    /// The value sealed for `purpose`, if the state is intact and not expired.
    pub fn open(&self, purpose: &str, state: &str) -> Result<Value, Refused> {
        let altered = || Refused("the requestState was altered, or was not made by this server".into());
        let (body, tag) = state.split_once('.').ok_or_else(altered)?;
        let tag = BASE64URL_NOPAD.decode(tag.as_bytes()).map_err(|_| altered())?;
        hmac::verify(&self.key, body.as_bytes(), &tag).map_err(|_| altered())?;
        let body: Value = BASE64URL_NOPAD
            .decode(body.as_bytes())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(altered)?;
        if body["purpose"] != purpose {
            return Err(Refused(OTHER_PURPOSE.into()));
        }
        if body["expires"].as_u64().is_none_or(|e| e <= now_ms()) {
            return Err(Refused("the requestState has expired; call the tool again".into()));
        }
        Ok(body["value"].clone())
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_state_opens_only_intact_for_its_purpose_and_in_time() {
        let s = Sealer::new().unwrap();
        let state = s.seal("approval:t", json!({"n": 1}), Duration::from_secs(60));
        assert_eq!(s.open("approval:t", &state), Ok(json!({"n": 1})));
        assert_eq!(s.open("approval:u", &state).unwrap_err().0, "the requestState belongs to another call");
        // Any change of body or tag, and another process's key, are refused alike.
        let (body, tag) = state.split_once('.').unwrap();
        let forged_body = BASE64URL_NOPAD.encode(json!({"purpose": "approval:t", "expires": u64::MAX, "value": {"n": 2}}).to_string().as_bytes());
        for bad in [format!("{state}-TAMPERED"), format!("{forged_body}.{tag}"), format!("{body}x.{tag}"), body.to_owned(), String::new()] {
            assert!(s.open("approval:t", &bad).unwrap_err().0.contains("altered"), "{bad}");
        }
        assert!(Sealer::new().unwrap().open("approval:t", &state).is_err());
        let expired = s.seal("approval:t", json!(1), Duration::ZERO);
        assert!(s.open("approval:t", &expired).unwrap_err().0.contains("expired"));
    }
}
