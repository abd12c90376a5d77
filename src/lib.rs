//! toolreg: a sidecar that owns an LLM application's tool catalog. See ARCHITECTURE.md for the
//! layers (transport, protocol, server, domain) and the invariants between them.
#![deny(clippy::print_stdout)]

pub mod apps;
pub mod approval;
pub mod audit;
pub mod telemetry;
pub mod catalog;
pub mod code_mode;
pub mod confine;
pub mod embed;
pub mod exposition;
pub mod gateway;
pub mod hostconfig;
pub mod invisible;
pub mod invoke;
pub mod logging;
pub mod mcp_registry;
pub mod media;
pub mod meta;
pub mod os;
pub mod output;
pub mod overrides;
pub mod protocol;
pub mod registry;
pub mod results;
pub mod repair;
pub mod route;
pub mod sandbox;
pub mod secret;
pub mod server;
pub mod service;
pub mod settings;
pub mod store;
pub mod sync;
pub mod tasks;
pub mod tokenize;
pub mod transport;
pub mod upstream;
pub mod usage;
pub mod validate;
