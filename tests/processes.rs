//! Several real toolreg processes over one state directory (issue 63): a host's sidecar and
//! `toolreg mcp` gateways, as on a desktop, each doing what a user does at about the same time.
//! One module per kind of shared state.
mod support;

#[path = "processes/oauth.rs"]
mod oauth;
