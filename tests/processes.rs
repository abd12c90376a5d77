//! Several real toolreg processes over one state directory, as on a desktop (issue 63): a host's
//! sidecar (`cacheDir` the shared directory) and gateways (`$TOOLREG_STATE_DIR` the same), each
//! doing what a user does at about the same time. One module per kind of shared state.

mod support;

#[path = "processes/audit.rs"]
mod audit;
