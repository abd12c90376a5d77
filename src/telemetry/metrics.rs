//! The metrics, aggregated in memory and exported whole (cumulative temporality): each is a
//! map from its attribute set to a sum or a histogram. Recording is one lock held for an
//! addition; the exporter copies the maps under the same lock and encodes outside it.
//! Attribute sets stay small: tool, server, method, outcome, `error.type`.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// What a metric is.
pub struct Def {
    pub name: &'static str,
    pub description: &'static str,
    pub unit: &'static str,
    pub histogram: bool,
}

/// The conventions' boundaries for MCP operation durations, in seconds.
pub const BOUNDS: [f64; 14] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

const fn def(name: &'static str, description: &'static str, unit: &'static str, histogram: bool) -> Def {
    Def { name, description, unit, histogram }
}

pub const SERVER_DURATION: Def = def("mcp.server.operation.duration", "Duration of an MCP request the gateway served (toolreg mcp)", "s", true);
pub const RPC_DURATION: Def = def("rpc.server.call.duration", "Duration of a JSON-RPC request the sidecar served (toolreg serve)", "s", true);
pub const CLIENT_DURATION: Def = def("mcp.client.operation.duration", "Duration of a tool run on an upstream MCP server, approval included", "s", true);
pub const CALLS: Def = def("toolreg.tool.calls", "Tool runs, by tool, server and outcome", "{call}", false);
pub const ERRORS: Def = def(
    "toolreg.tool.errors",
    "Tool runs that did not answer a result: tool errors, failures, denials, holds, cancellations",
    "{call}",
    false,
);
pub const APPROVALS: Def = def("toolreg.approvals", "Approvals decided, by decision", "{approval}", false);
pub const DEFERRED_TOKENS: Def = def("toolreg.deferral.tokens", "Tokens of tool definitions that plans kept out of the model's context by deferring them", "{token}", false);
pub const DROPPED: Def = def("toolreg.telemetry.dropped", "Spans lost: the export queue was full or the collector did not take them", "{span}", false);

pub type Labels = Vec<(&'static str, String)>;

#[derive(Clone, Debug, PartialEq)]
pub struct Hist {
    pub count: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    /// One more than `BOUNDS`: the last counts what passed every bound.
    pub buckets: [u64; BOUNDS.len() + 1],
}

impl Hist {
    fn new() -> Hist {
        Hist { count: 0, sum: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY, buckets: [0; BOUNDS.len() + 1] }
    }

    /// Buckets are `(previous bound, bound]`, as OTLP's explicit bounds say.
    pub fn add(&mut self, v: f64) {
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let i = BOUNDS.iter().position(|b| v <= *b).unwrap_or(BOUNDS.len());
        self.buckets[i] += 1;
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Sum(u64),
    Hist(Box<Hist>),
}

/// Every metric recorded so far, by name, then by attribute set.
pub type Snapshot = BTreeMap<&'static str, (&'static Def, BTreeMap<Labels, Cell>)>;

pub struct Store {
    /// When counting began (unix nanoseconds): every point's start.
    pub start: u64,
    cells: Mutex<Snapshot>,
}

impl Store {
    pub fn new(start: u64) -> Store {
        Store { start, cells: Mutex::default() }
    }

    fn cell(&self, def: &'static Def, labels: Labels, f: impl FnOnce(&mut Cell)) {
        let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        let by_labels = &mut cells.entry(def.name).or_insert_with(|| (def, BTreeMap::new())).1;
        let cell = by_labels.entry(labels).or_insert_with(|| if def.histogram { Cell::Hist(Box::new(Hist::new())) } else { Cell::Sum(0) });
        f(cell);
    }

    pub fn add(&self, def: &'static Def, mut labels: Labels, n: u64) {
        labels.sort_unstable();
        self.cell(def, labels, |c| {
            if let Cell::Sum(s) = c {
                *s += n;
            }
        });
    }

    pub fn record(&self, def: &'static Def, mut labels: Labels, v: f64) {
        labels.sort_unstable();
        self.cell(def, labels, |c| {
            if let Cell::Hist(h) = c {
                h.add(v);
            }
        });
    }

    /// A copy of everything, `dropped` spans included when any were.
    pub fn snapshot(&self, dropped: u64) -> Snapshot {
        let mut copy = self.cells.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if dropped > 0 {
            copy.insert(DROPPED.name, (&DROPPED, BTreeMap::from([(Vec::new(), Cell::Sum(dropped))])));
        }
        copy
    }
}
