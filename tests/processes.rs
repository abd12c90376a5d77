//! Several toolreg processes over one state directory (issue 63): a sidecar whose `cacheDir` is
//! the directory and two `toolreg mcp` gateways with it as `TOOLREG_STATE_DIR`, each doing what
//! a user does at about the same time. One module per kind of state they share.

mod support;

#[path = "processes/grants.rs"]
mod grants;
#[path = "processes/three.rs"]
mod three;
#[path = "processes/usage.rs"]
mod usage;
