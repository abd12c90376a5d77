//! toolreg: a sidecar that owns an LLM application's tool catalog. See ARCHITECTURE.md for the
//! layers (transport, protocol, server, domain) and the invariants between them.
#![deny(clippy::print_stdout)]

pub mod exposition;
pub mod hostconfig;
pub mod logging;
pub mod protocol;
pub mod registry;
pub mod server;
pub mod tokenize;
pub mod transport;
