//! A server's pins as its state machine keeps them (`pins.rs` has the rules): loaded once,
//! re-evaluated under the data lock whenever the list, the pins or the rules change, and
//! answering what may run (`refusal`) and what asks the user (`asks_approval`) from the
//! current list, never the registry's copy.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Data, Server};
use crate::catalog::error::CatalogError;
use crate::catalog::lock;
use crate::catalog::pins::{self, Held, Pins, Rules, ToolPin};

impl Server {
    pub(super) fn apply_pins(self: &Arc<Self>, loaded: Pins) {
        let mut d = lock(&self.data);
        if d.pins.is_none() {
            d.pins = Some(loaded);
        }
        let persist_pins = self.reevaluate(&mut d);
        self.publish(&mut d, false);
        drop(d);
        if persist_pins {
            self.persist_pins();
        }
    }

    fn rules(&self) -> Rules {
        Rules::of(&lock(&self.config))
    }

    /// Recompute the held tools after the list, the pins or the rules changed; a list seen
    /// for the first time (or under `auto`) is approved here. Returns whether the pins changed.
    pub(super) fn reevaluate(&self, d: &mut Data) -> bool {
        let rules = self.rules();
        let Data { pins, tools, held, .. } = d;
        match (pins.as_mut(), tools.as_deref()) {
            (None, _) => {
                *held = None;
                false
            }
            (Some(_), None) => {
                *held = Some(Held::default());
                false
            }
            (Some(p), Some(tools)) => {
                let changed = if rules.quarantine { p.quarantine() } else { p.observe(tools, rules.trust) };
                *held = Some(p.held(tools, &rules));
                changed
            }
        }
    }

    /// The pins, if read (for a successor with the same id).
    pub fn pins(&self) -> Option<Pins> {
        lock(&self.data).pins.clone()
    }

    /// Names of the held tools of the current list; `None` while the pins are read from disk.
    pub fn held(&self) -> Option<Held> {
        lock(&self.data).held.clone()
    }

    fn pins_loading(&self) -> CatalogError {
        CatalogError::NotConnected(format!(
            "the approved tool definitions of MCP server {} are still being read; try again",
            self.id
        ))
    }

    /// Every tool of the current list with its pin state (and a diff when changed).
    pub fn pin_report(&self) -> Result<Vec<ToolPin>, CatalogError> {
        let rules = self.rules();
        let d = lock(&self.data);
        let pins = d.pins.as_ref().ok_or_else(|| self.pins_loading())?;
        Ok(pins.report(d.tools.as_deref().unwrap_or_default(), &rules))
    }

    /// Make the current definitions of `names` the approved ones, unless one changed since the
    /// user reviewed its fingerprint in `reviewed`.
    pub fn approve(self: &Arc<Self>, names: &[String], reviewed: &BTreeMap<String, String>) -> Result<(), CatalogError> {
        let mut d = lock(&self.data);
        let tools = d.tools.clone().unwrap_or_default();
        let Some(pins) = d.pins.as_mut() else { return Err(self.pins_loading()) };
        pins.approve(&tools, names, reviewed).map_err(|refused| match refused {
            pins::Refused::NotInList(tools) => CatalogError::NotInList { server: self.id.clone(), tools },
            pins::Refused::ChangedSinceReview(tools) => CatalogError::ChangedSinceReview { server: self.id.clone(), tools },
        })?;
        self.reevaluate(&mut d);
        self.publish(&mut d, false);
        drop(d);
        self.persist_pins();
        Ok(())
    }

    /// A read of `uri` answered `result`: when a tool of the current list names it as its view,
    /// the view is pinned with the tool (`pins::views`). A view that changed since it was
    /// approved holds those tools and is refused.
    pub fn check_view(self: &Arc<Self>, uri: &str, result: &serde_json::Value) -> Result<(), CatalogError> {
        let rules = self.rules();
        let mut d = lock(&self.data);
        let Data { pins, tools, .. } = &mut *d;
        let tools = tools.as_deref().unwrap_or_default();
        if !tools.iter().any(|t| t.ui.as_ref().and_then(|u| u.resource_uri.as_deref()) == Some(uri)) {
            return Ok(());
        }
        let Some(pins) = pins.as_mut() else { return Err(self.pins_loading()) };
        match pins.check_view(tools, uri, &pins::view_digest(result), rules.trust) {
            pins::ViewCheck::Unchanged => Ok(()),
            pins::ViewCheck::Recorded => {
                drop(d);
                self.persist_pins();
                Ok(())
            }
            pins::ViewCheck::Changed(names) => {
                self.reevaluate(&mut d);
                self.publish(&mut d, false);
                drop(d);
                // On disk too: the file is what another process approves from, and what a
                // gateway adopts approvals from at its next call.
                self.persist_pins();
                let review = (self.shared.opts.review.0)(&self.id, &names[0]);
                let message = format!(
                    "The view {uri} of MCP server {} changed since the user approved it with {}; it was not shown, and those tools are held. {review}",
                    self.id,
                    names.join(", ")
                );
                Err(CatalogError::Held { server: self.id.clone(), tool: names[0].clone(), message })
            }
        }
    }

    /// Approves the held tools whose current definitions the pins on disk approve: what
    /// `toolreg pins --approve` (another process) wrote. Only approvals are taken from the
    /// file, never its absence or its other records, so nothing approved here is lost.
    /// Returns whether anything was approved.
    pub fn adopt_disk_approvals(self: &Arc<Self>) -> bool {
        let Some(dir) = self.shared.opts.cache_dir.clone() else { return false };
        let disk = pins::load(&dir, &self.id);
        let rules = self.rules();
        let mut d = lock(&self.data);
        let tools = d.tools.clone().unwrap_or_default();
        let Some(held) = d.held.clone() else { return false };
        let Some(pins) = d.pins.as_mut() else { return false };
        let adopt: Vec<String> = tools.iter().filter(|t| held.contains(&t.name) && pins.adopts(&disk, t, &rules)).map(|t| t.name.clone()).collect();
        if adopt.is_empty() || pins.approve(&tools, &adopt, &BTreeMap::new()).is_err() {
            return false;
        }
        tracing::info!(server = %self.id, tools = ?adopt, "approved on disk by another process");
        self.reevaluate(&mut d);
        self.publish(&mut d, false);
        drop(d);
        // The file then holds both processes' approvals.
        self.persist_pins();
        true
    }

    /// Writes the pins now, on this thread (a command that exits next cannot leave it to a
    /// background task).
    pub fn store_pins(&self) -> std::io::Result<()> {
        let Some(dir) = &self.shared.opts.cache_dir else { return Ok(()) };
        let _guard = lock(&self.persist_lock);
        let Some(pins) = self.pins() else { return Ok(()) };
        pins::store(dir, &self.id, &pins)
    }

    /// Why a call to `tool` must not run now (its current definition is not approved).
    pub fn refusal(&self, tool: &str) -> Option<String> {
        let rules = self.rules();
        let d = lock(&self.data);
        let Some(pins) = &d.pins else { return Some(self.pins_loading().to_string()) };
        let current = d.tools.iter().flatten().find(|t| t.name == tool)?;
        pins.refusal(&self.id, current, &rules, &(self.shared.opts.review.0)(&self.id, tool))
    }

    /// The fingerprint the pins approve `tool` by, under `trust: "pinned"` only (under `auto`
    /// every list is approved as it comes, so a pin binds nothing the user saw).
    pub fn pin_of(&self, tool: &str) -> Option<String> {
        if self.rules().trust != crate::catalog::policy::Trust::Pinned {
            return None;
        }
        lock(&self.data).pins.as_ref()?.approved_fingerprint(tool).map(str::to_string)
    }

    /// Whether a call to `tool` waits for the user, under the current configuration. Fails
    /// closed: it asks if the tool's current annotations ask or its approved ones did, so no
    /// change of list between this question and the call's pin check spares the question.
    pub fn asks_approval(&self, tool: &str) -> bool {
        let config = self.config();
        let d = lock(&self.data);
        let current = d.tools.iter().flatten().find(|t| t.name == tool);
        let approved = d.pins.as_ref().and_then(|p| p.approved_tool(tool));
        config.asks_approval(tool, current.and_then(|t| t.annotations.as_ref()))
            || approved.is_some_and(|a| config.asks_approval(tool, a.annotations.as_ref()))
    }
}
