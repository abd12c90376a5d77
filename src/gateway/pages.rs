//! Pages of the lists `toolreg mcp` serves (`tools/list`, `resources/list`,
//! `resources/templates/list`, `prompts/list`, `skills/list`, `resources/directory/read`), with
//! MCP's `cursor` / `nextCursor`. (Not `catalog/pages.rs`: that one follows upstreams' cursors.)
//!
//! A client may cap a message or an event: the MCP Python SDK 2.3 refuses a Server-Sent Event
//! over 1 MiB, and 657 real tools in one `tools/list` were past it. So a page holds at most
//! `MAX_ENTRIES` entries and `MAX_BYTES` of entries (their JSON array, compact, as listed); one
//! entry bigger than that alone still gets a page of its own. A listing within both bounds is one
//! page with no `nextCursor`, the same bytes as before pagination.
//!
//! Invariants:
//! - A cursor holds no process state: the offset of its page and the digest of the listing it
//!   was cut from (its name and every entry's bytes). Any process or replica with the same
//!   listing answers the same page; a listing that changed since is refused.
//! - Pages are cut greedily from the start, so a listing has one set of page starts: a cursor
//!   whose offset is not one of them was edited, and is refused like one that does not parse.
//! - Refusals are -32602 with `data.reason`: the client lists again from the start.

use std::ops::Range;
use std::sync::Arc;

use data_encoding::{BASE64URL_NOPAD, HEXLOWER};
use rmcp::ErrorData;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// At most this many entries a page.
pub const MAX_ENTRIES: usize = 500;
/// At most this many bytes of entries a page: half the Python SDK's 1 MiB event limit leaves
/// room for the result and JSON-RPC around them.
pub const MAX_BYTES: usize = 512 * 1024;

/// One page of a listing: the entries it holds, and the cursor of the next page if any.
#[derive(Debug, PartialEq)]
pub struct Page {
    pub range: Range<usize>,
    pub next: Option<String>,
}

/// What a cursor says, base64url of this JSON.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Cursor {
    /// The page's first entry.
    at: usize,
    /// The listing's digest (`digest`).
    of: String,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CursorError {
    #[error("the cursor is not one this gateway gave")]
    Unreadable,
    #[error("the listing changed since this cursor was given: list again without a cursor")]
    Changed,
    #[error("the cursor points at no page of this listing")]
    NoSuchPage,
}

impl CursorError {
    fn reason(&self) -> &'static str {
        match self {
            CursorError::Unreadable => "unreadable cursor",
            CursorError::Changed => "listing changed",
            CursorError::NoSuchPage => "no such page",
        }
    }

    /// The -32602 answer to `method`.
    pub fn answer(&self, method: &str) -> ErrorData {
        ErrorData::invalid_params(format!("{method}: {self}"), Some(json!({"reason": self.reason()})))
    }
}

/// The page of `entries` (the listing `list` names) that `cursor` asks for: the first page
/// without one.
pub fn page(list: &str, entries: &[Value], cursor: Option<&str>) -> Result<Page, CursorError> {
    let serialized: Vec<Vec<u8>> = entries.iter().map(|e| serde_json::to_vec(e).unwrap_or_default()).collect();
    let starts = starts(&serialized);
    let of = digest(list, &serialized);
    let at = match cursor {
        None => 0,
        Some(text) => {
            let c = read(text)?;
            if c.of != of {
                return Err(CursorError::Changed);
            }
            // Offset 0 is never given: the first page is asked without a cursor.
            if c.at == 0 || !starts.contains(&c.at) {
                return Err(CursorError::NoSuchPage);
            }
            c.at
        }
    };
    let end = starts.iter().find(|s| **s > at).copied().unwrap_or(entries.len());
    let next = (end < entries.len()).then(|| write(&Cursor { at: end, of }));
    Ok(Page { range: at..end, next })
}

/// The page `cursor` asks of the listing `pick` reads in `owner`, cut on tokio's blocking pool
/// (measuring 2,000 tools takes milliseconds), with its entries; `method` names the listing.
pub async fn cut<S: Send + Sync + 'static>(method: &'static str, owner: Arc<S>, pick: fn(&S) -> &[Value], cursor: Option<String>) -> Result<(Vec<Value>, Option<String>), ErrorData> {
    let work = move || {
        let entries = pick(&owner);
        let p = page(method, entries, cursor.as_deref()).map_err(|e| e.answer(method))?;
        Ok((entries[p.range].to_vec(), p.next))
    };
    tokio::task::spawn_blocking(work).await.map_err(|e| ErrorData::internal_error(format!("{method}: cutting a page failed: {e}"), None))?
}

/// Where each page starts: as many entries as fit both bounds, at least one.
fn starts(serialized: &[Vec<u8>]) -> Vec<usize> {
    let mut starts = vec![0];
    let (mut count, mut bytes) = (0, 2); // the array's brackets
    for (i, e) in serialized.iter().enumerate() {
        let more = e.len() + usize::from(count > 0); // and a comma after the first
        if count > 0 && (count == MAX_ENTRIES || bytes + more > MAX_BYTES) {
            starts.push(i);
            (count, bytes) = (0, 2);
            bytes += e.len();
        } else {
            bytes += more;
        }
        count += 1;
    }
    starts
}

/// A short hash of the listing: its name, then each entry's bytes with their length.
fn digest(list: &str, serialized: &[Vec<u8>]) -> String {
    let mut h = Sha256::new();
    h.update(list.as_bytes());
    for e in serialized {
        h.update((e.len() as u64).to_le_bytes());
        h.update(e);
    }
    HEXLOWER.encode(&h.finalize()[..12])
}

fn write(c: &Cursor) -> String {
    BASE64URL_NOPAD.encode(&serde_json::to_vec(c).unwrap_or_default())
}

fn read(text: &str) -> Result<Cursor, CursorError> {
    let bytes = BASE64URL_NOPAD.decode(text.as_bytes()).map_err(|_| CursorError::Unreadable)?;
    serde_json::from_slice(&bytes).map_err(|_| CursorError::Unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(n: usize, pad: usize) -> Vec<Value> {
        (0..n).map(|i| json!({"name": format!("t{i}"), "description": "x".repeat(pad)})).collect()
    }

    /// Every page of `entries`, following the cursors.
    fn all(entries: &[Value]) -> Vec<Page> {
        let mut pages = vec![page("tools", entries, None).unwrap()];
        while let Some(next) = pages.last().unwrap().next.clone() {
            pages.push(page("tools", entries, Some(&next)).unwrap());
        }
        pages
    }

    fn bytes(entries: &[Value]) -> usize {
        serde_json::to_vec(entries).unwrap().len()
    }

    #[test]
    fn a_lean_listing_is_one_page() {
        let list = tools(500, 10);
        assert_eq!(page("tools", &list, None).unwrap(), Page { range: 0..500, next: None });
        assert_eq!(page("tools", &[], None).unwrap(), Page { range: 0..0, next: None });
    }

    #[test]
    fn pages_hold_at_most_500_entries() {
        let list = tools(1201, 10);
        let ranges: Vec<_> = all(&list).into_iter().map(|p| p.range).collect();
        assert_eq!(ranges, vec![0..500, 500..1000, 1000..1201]);
    }

    #[test]
    fn pages_hold_at_most_512_kib_and_cover_every_entry_once() {
        let list = tools(700, 3000);
        let pages = all(&list);
        assert!(pages.len() > 3, "{}", pages.len());
        let mut covered = 0;
        for p in &pages {
            assert_eq!(p.range.start, covered);
            covered = p.range.end;
            assert!(bytes(&list[p.range.clone()]) <= MAX_BYTES);
            // Full: the next entry would not have fit.
            if p.range.end < list.len() {
                assert!(bytes(&list[p.range.start..p.range.end + 1]) > MAX_BYTES);
            }
        }
        assert_eq!(covered, list.len());
    }

    #[test]
    fn an_entry_past_the_bound_gets_a_page_of_its_own() {
        let mut list = tools(3, 10);
        list.insert(1, json!({"name": "huge", "description": "y".repeat(MAX_BYTES + 1)}));
        let ranges: Vec<_> = all(&list).into_iter().map(|p| p.range).collect();
        assert_eq!(ranges, vec![0..1, 1..2, 2..4]);
    }

    #[test]
    fn a_cursor_answers_the_same_page_again() {
        let list = tools(1200, 10);
        let next = page("tools", &list, None).unwrap().next.unwrap();
        assert_eq!(page("tools", &list, Some(&next)), page("tools", &list, Some(&next)));
        assert_eq!(page("tools", &list.clone(), Some(&next)).unwrap().range, 500..1000);
    }

    #[test]
    fn a_changed_listing_or_another_list_refuses_the_cursor() {
        let mut list = tools(1200, 10);
        let next = page("tools", &list, None).unwrap().next.unwrap();
        assert_eq!(page("prompts", &list, Some(&next)), Err(CursorError::Changed));
        list[1199]["description"] = json!("changed");
        assert_eq!(page("tools", &list, Some(&next)), Err(CursorError::Changed));
    }

    #[test]
    fn a_forged_cursor_is_refused() {
        let list = tools(1200, 10);
        let next = page("tools", &list, None).unwrap().next.unwrap();
        let mut c = read(&next).unwrap();
        for at in [0, 1, 499, 1200, 5000] {
            c.at = at;
            assert_eq!(page("tools", &list, Some(&write(&c))), Err(CursorError::NoSuchPage), "at {at}");
        }
        for garbage in ["", "!!", "e30", &BASE64URL_NOPAD.encode(b"{\"at\":500}")] {
            assert_eq!(page("tools", &list, Some(garbage)), Err(CursorError::Unreadable), "{garbage:?}");
        }
        let e = CursorError::Changed.answer("tools/list");
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(e.data, Some(json!({"reason": "listing changed"})));
    }
}
