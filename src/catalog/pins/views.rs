//! Views (MCP Apps) are pinned with their tools: a view is HTML that acts with the user's
//! authority, so the tool that names it is approved with the view as it was first read. Its
//! digest (SHA-256 of the canonical JSON of the read result's `contents`: text or blob, MIME
//! type, `_meta` with its csp and permissions) is recorded beside the approved definition the
//! first time the view is read; a later read that differs holds every tool naming the view
//! (`changed`, shown in `catalog/pins`) and is refused, until the host approves the tools
//! again, which approves the view as now read. Under `trust: auto` a new view is taken as is.

use data_encoding::HEXLOWER;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{PinDiff, Pins};
use crate::catalog::canonical::canonical;
use crate::catalog::policy::Trust;
use crate::catalog::tool::McpTool;

/// What a read of a view meant for the pins.
#[derive(Debug, PartialEq, Eq)]
pub enum ViewCheck {
    /// No approved tool names the resource, or its recorded view is the one read.
    Unchanged,
    /// First read of the view of an approved tool (or a new one under `auto`): recorded.
    Recorded,
    /// The view differs from the one approved with these tools, which are now held.
    Changed(Vec<String>),
}

/// The digest a view is pinned by: over `contents` of a `resources/read` result.
pub fn view_digest(result: &Value) -> String {
    let contents = result.get("contents").cloned().unwrap_or(Value::Null);
    HEXLOWER.encode(&Sha256::digest(canonical(&contents).as_bytes()))
}

/// The view `t` names, if any.
pub(super) fn view_uri(t: &McpTool) -> Option<&str> {
    t.ui.as_ref()?.resource_uri.as_deref()
}

/// What `catalog/pins` says of a tool held for its view alone.
pub(super) fn view_diff(uri: &str) -> PinDiff {
    PinDiff {
        summary: format!("its view {uri} changed since the user approved it"),
        description_before: None,
        description_after: None,
        changed_paths: vec!["/_meta/ui/resourceUri".into()],
        hints_before: None,
        hints_after: None,
    }
}

impl Pins {
    /// `uri` was read from the server and its contents digest to `digest`.
    pub fn check_view(&mut self, tools: &[McpTool], uri: &str, digest: &str, trust: Trust) -> ViewCheck {
        let mut result = ViewCheck::Unchanged;
        let mut changed = Vec::new();
        for t in tools.iter().filter(|t| view_uri(t) == Some(uri)) {
            let Some(a) = self.approved.get_mut(&t.name) else { continue };
            match a.view.as_deref() {
                Some(d) if d == digest => {}
                Some(_) if trust == Trust::Pinned && self.baseline => changed.push(t.name.clone()),
                _ => {
                    a.view = Some(digest.to_owned());
                    result = ViewCheck::Recorded;
                }
            }
        }
        if changed.is_empty() {
            return result;
        }
        self.changed_views.insert(uri.to_owned(), digest.to_owned());
        changed.sort();
        ViewCheck::Changed(changed)
    }

    /// Whether `t`'s view was read changed since it was approved with `t`.
    pub(super) fn view_changed(&self, t: &McpTool) -> bool {
        let Some(uri) = view_uri(t) else { return false };
        let Some(now) = self.changed_views.get(uri) else { return false };
        self.approved.get(&t.name).is_some_and(|a| a.view.as_deref().is_some_and(|d| d != now))
    }

    /// The digest of `t`'s view as last read changed, which approving `t` approves.
    pub(super) fn view_read(&self, t: &McpTool) -> Option<&String> {
        self.changed_views.get(view_uri(t)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::pins::{PinState, Rules};
    use serde_json::json;

    fn with_view(name: &str) -> McpTool {
        serde_json::from_value(json!({"name": name, "description": "d", "inputSchema": {"type": "object"}, "ui": {"resourceUri": "ui://a/v.html"}})).unwrap()
    }

    #[test]
    fn a_view_is_recorded_on_first_read_and_a_changed_one_holds_its_tools_until_approved() {
        let tools = vec![with_view("show"), with_view("also")];
        let mut pins = Pins::default();
        pins.observe(&tools, Trust::Pinned);
        let rules = Rules::default();
        let (v1, v2) = (view_digest(&json!({"contents": [{"text": "<html>1"}]})), view_digest(&json!({"contents": [{"text": "<html>2"}]})));
        assert_ne!(v1, v2);
        assert_eq!(pins.check_view(&tools, "ui://a/v.html", &v1, Trust::Pinned), ViewCheck::Recorded);
        assert_eq!(pins.check_view(&tools, "ui://a/v.html", &v1, Trust::Pinned), ViewCheck::Unchanged);
        assert_eq!(pins.check_view(&tools, "ui://other", &v2, Trust::Pinned), ViewCheck::Unchanged);
        assert_eq!(pins.check_view(&tools, "ui://a/v.html", &v2, Trust::Pinned), ViewCheck::Changed(vec!["also".into(), "show".into()]));
        assert_eq!(pins.state(&tools[0], &rules), PinState::Changed);
        assert_eq!(pins.held(&tools, &rules).changed, ["also", "show"]);
        let report = pins.report(&tools, &rules);
        assert!(report[0].diff.as_ref().unwrap().summary.contains("ui://a/v.html"), "{report:?}");
        // Approving one tool approves the view as read for it; the other stays held.
        pins.approve(&tools, &["show".into()], &Default::default()).unwrap();
        assert_eq!(pins.state(&tools[0], &rules), PinState::Approved);
        assert_eq!(pins.state(&tools[1], &rules), PinState::Changed);
        assert_eq!(pins.check_view(&tools[..1], "ui://a/v.html", &v2, Trust::Pinned), ViewCheck::Unchanged);
    }

    #[test]
    fn under_auto_trust_a_new_view_is_taken() {
        let tools = vec![with_view("show")];
        let mut pins = Pins::default();
        pins.observe(&tools, Trust::Auto);
        pins.check_view(&tools, "ui://a/v.html", "d1", Trust::Auto);
        assert_eq!(pins.check_view(&tools, "ui://a/v.html", "d2", Trust::Auto), ViewCheck::Recorded);
    }
}
