//! A server's skills (SEP-2640, extension `io.modelcontextprotocol/skills`): directories of
//! files served as resources, described by `skills/list` (each skill's `SKILL.md` URI, its
//! frontmatter, and each file's `sha256:` digest and size).
//!
//! Invariants:
//! - Nothing is fetched ahead of need: listing (here, or the background refresh that keeps a
//!   server's entries last-known-good with its other extras, `resources.rs`) reads
//!   `skills/list` only; a skill's files are read when the host loads that skill
//!   (`load_skill`), or a gateway client reads them, never on connection or listing.
//! - Nothing unverified is used: each file read is checked against its entry (size first,
//!   then digest) and `SKILL.md`'s frontmatter against the entry's, field by field, before the
//!   next file is read; the first mismatch fails the load and nothing of it is returned.
//! - Bounded as any request: all of a listing's pages within the list timeout, each read
//!   within the call timeout.

use data_encoding::BASE64;
use rmcp::model::SkillResource;
use serde::Serialize;
use serde_json::{json, Value};

use super::error::CatalogError;
use super::frontmatter;
use super::resources::{Ask, Kind};
use super::Catalog;

/// A skill loaded and verified: its `SKILL.md` first, then its other files, as the server
/// sent them (`{uri, mimeType?, text | blob}`).
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LoadedSkill {
    pub uri: String,
    pub frontmatter: Value,
    pub files: Vec<Value>,
}

impl Catalog {
    /// The server's `skills/list`, every page, as it sent the entries. A server that does not
    /// declare the extension is `NotOffered`.
    pub async fn list_skills(&self, server_id: &str) -> Result<Vec<Value>, CatalogError> {
        let server = self.enabled_server(server_id)?;
        let config = server.config();
        if let Some(why) = server.needs_user() {
            return Err(CatalogError::NeedsAuth(why));
        }
        let timeout = config.timeouts.list(self.inner.shared.opts.list_timeout);
        let conn = tokio::time::timeout(timeout, server.connection())
            .await
            .unwrap_or_else(|_| Err(CatalogError::timed_out("skills/list", timeout)))
            .map_err(|e| e.redacted(&config))?;
        let offered = conn.peer().peer_info().is_some_and(|i| i.capabilities.supports_skills());
        if !offered {
            return Err(CatalogError::NotOffered { server: server_id.to_owned(), method: "skills/list".into() });
        }
        conn.list_all(Kind::Skills, timeout).await.map_err(|e| e.redacted(&config))
    }

    /// The skill whose `SKILL.md` is `uri`, from a fresh `skills/list` entry, each file read
    /// and verified before the next (see the module's invariants).
    pub async fn load_skill(&self, server_id: &str, uri: &str) -> Result<LoadedSkill, CatalogError> {
        let entries = self.list_skills(server_id).await?;
        let entry = entries
            .iter()
            .find(|e| e.get("uri").and_then(Value::as_str) == Some(uri))
            .ok_or_else(|| CatalogError::Mcp(format!("MCP server {server_id} lists no skill {uri}")))?;
        let expected = entry.get("frontmatter").cloned().unwrap_or(Value::Null);
        // `"dynamic"`: no digests exist; SKILL.md is still checked against the frontmatter.
        let files: Vec<SkillResource> = match entry.get("resources") {
            Some(Value::Array(_)) => serde_json::from_value(entry["resources"].clone()).map_err(|e| CatalogError::Mcp(format!("skill {uri}: its file list is invalid: {e}")))?,
            _ => Vec::new(),
        };
        let skill_md = files.iter().find(|f| f.uri == uri);
        if !files.is_empty() && skill_md.is_none() {
            return Err(CatalogError::Mcp(format!("skill {uri}: its file list does not include SKILL.md")));
        }
        let (content, bytes) = self.read_file(server_id, uri).await?;
        if let Some(f) = skill_md {
            f.verify(&bytes).map_err(|e| refused(uri, &e.to_string()))?;
        }
        let text = String::from_utf8(bytes).map_err(|_| refused(uri, "SKILL.md is not UTF-8"))?;
        frontmatter::matches(&text, &expected).map_err(|why| refused(uri, &why))?;
        let mut out = vec![content];
        for f in files.iter().filter(|f| f.uri != uri) {
            let (content, bytes) = self.read_file(server_id, &f.uri).await?;
            f.verify(&bytes).map_err(|e| refused(uri, &e.to_string()))?;
            out.push(content);
        }
        Ok(LoadedSkill { uri: uri.to_owned(), frontmatter: expected, files: out })
    }

    /// One `resources/read` of a skill file: the content item for `uri` and its bytes.
    async fn read_file(&self, server_id: &str, uri: &str) -> Result<(Value, Vec<u8>), CatalogError> {
        let result = self.ask(server_id, Ask::ReadResource, json!({"uri": uri})).await?;
        let contents = result.get("contents").and_then(Value::as_array).cloned().unwrap_or_default();
        let item = contents
            .iter()
            .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
            .or(contents.first())
            .cloned()
            .ok_or_else(|| CatalogError::Mcp(format!("resources/read {uri}: no contents")))?;
        let bytes = match (item.get("text").and_then(Value::as_str), item.get("blob").and_then(Value::as_str)) {
            (Some(text), _) => text.as_bytes().to_vec(),
            (None, Some(blob)) => BASE64.decode(blob.as_bytes()).map_err(|_| refused(uri, "its blob is not base64"))?,
            (None, None) => return Err(refused(uri, "it has neither text nor blob")),
        };
        Ok((item, bytes))
    }
}

fn refused(skill: &str, why: &str) -> CatalogError {
    CatalogError::Mcp(format!("skill {skill} failed verification and was not loaded: {why}"))
}
