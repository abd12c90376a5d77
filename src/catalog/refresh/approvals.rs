//! A server's pins as its state machine keeps them (`pins.rs` has the rules): read from the
//! store once, re-evaluated under the data lock whenever the list, the pins or the rules
//! change, and answering what may run (`refusal`) and what asks the user (`asks_approval`)
//! from the current list, never the registry's copy.
//!
//! Every change made here is also queued as a `PinOp` (`Data::pin_ops`), which `persist.rs`
//! replays on the stored record: the pins in memory are always the record as last read with
//! the queued operations on top, so adopting what another process stored (`adopt`) loses
//! nothing of this one's.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Data, Server};
use crate::catalog::error::CatalogError;
use crate::catalog::lock;
use crate::catalog::pins::{self, Held, PinOp, Pins, Rules, ToolPin};

impl Server {
    /// The pins read at start (`revision`: the store's, when they came from it).
    pub(super) fn apply_pins(self: &Arc<Self>, loaded: Pins, revision: Option<u64>) {
        let mut d = lock(&self.data);
        if d.pins.is_none() {
            d.pins = Some(loaded);
            d.pins_revision = revision;
        }
        let persist_pins = self.reevaluate(&mut d);
        self.publish(&mut d, false);
        drop(d);
        if persist_pins {
            self.persist_pins();
        }
    }

    /// Takes `stored` (read from or just written to the store at `revision`) as the pins, with
    /// this process's unwritten operations on top; announces a change of the held tools.
    /// Returns whether the pins changed.
    pub(super) fn adopt(self: &Arc<Self>, stored: Pins, revision: u64) -> bool {
        let mut d = lock(&self.data);
        let mut now = stored;
        for op in &d.pin_ops {
            op.apply(&mut now);
        }
        d.pins_revision = Some(revision);
        if d.pins.as_ref() == Some(&now) {
            return false;
        }
        d.pins = Some(now);
        let persist_pins = self.reevaluate_as(&mut d, true);
        self.publish(&mut d, false);
        drop(d);
        if persist_pins {
            self.persist_pins();
        }
        true
    }

    fn rules(&self) -> Rules {
        Rules::of(&lock(&self.config))
    }

    /// Recompute the held tools after the list, the pins or the rules changed; a list seen
    /// for the first time (or under `auto`) is approved here. Returns whether the pins changed.
    pub(super) fn reevaluate(&self, d: &mut Data) -> bool {
        self.reevaluate_as(d, false)
    }

    /// `adopted`: the pins were just read from the store, where a baseline is never observed
    /// again (under `auto`, two processes with different lists would otherwise approve their
    /// own in turn, each write waking the other).
    fn reevaluate_as(&self, d: &mut Data, adopted: bool) -> bool {
        let rules = self.rules();
        let kept = self.shared.opts.cache_dir.is_some();
        let Data { pins, tools, held, pin_ops, .. } = d;
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
                let op = if adopted && p.has_baseline() {
                    None
                } else if rules.quarantine {
                    p.quarantine().then_some(PinOp::Quarantine)
                } else {
                    p.observe(tools, rules.trust).then(|| PinOp::Observe { tools: tools.to_vec(), trust: rules.trust })
                };
                *held = Some(p.held(tools, &rules));
                let changed = op.is_some();
                pin_ops.extend(op.filter(|_| kept));
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
        self.queue(&mut d, PinOp::Approve { tools: tools.into_iter().filter(|t| names.contains(&t.name)).collect() });
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
        let kept = self.shared.opts.cache_dir.is_some();
        let Data { pins, tools, pin_ops, .. } = &mut *d;
        let tools = tools.as_deref().unwrap_or_default();
        if !tools.iter().any(|t| t.ui.as_ref().and_then(|u| u.resource_uri.as_deref()) == Some(uri)) {
            return Ok(());
        }
        let Some(pins) = pins.as_mut() else { return Err(self.pins_loading()) };
        let digest = pins::view_digest(result);
        let check = pins.check_view(tools, uri, &digest, rules.trust);
        if check != pins::ViewCheck::Unchanged && kept {
            let naming = tools.iter().filter(|t| t.ui.as_ref().and_then(|u| u.resource_uri.as_deref()) == Some(uri)).cloned().collect();
            pin_ops.push(PinOp::View { tools: naming, uri: uri.to_owned(), digest, trust: rules.trust });
        }
        match check {
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
                // In the store too: the other processes hold these tools as well.
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

    /// Queues `op` for the store, when the pins are kept there.
    fn queue(&self, d: &mut Data, op: PinOp) {
        if self.shared.opts.cache_dir.is_some() {
            d.pin_ops.push(op);
        }
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
