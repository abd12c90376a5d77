//! Several toolreg processes over one state directory (issue 63): a sidecar and two gateways
//! doing what users do at about the same time, with release binaries over real pipes. One
//! module per kind of shared state.

mod support;

#[path = "processes/pins.rs"]
mod pins;
