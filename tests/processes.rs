//! Several real toolreg processes over one state directory (issue 63): a sidecar whose
//! `cacheDir` is the directory and `toolreg mcp` gateways with it as `TOOLREG_STATE_DIR`, as on a
//! desktop, each doing what a user does at about the same time. One module per kind of shared
//! state (`three` starts the three processes); `migration` opens a directory an older release
//! wrote, `crash` kills a writer mid-write.
mod support;

#[path = "processes/audit.rs"]
mod audit;
#[path = "processes/crash.rs"]
mod crash;
#[path = "processes/grants.rs"]
mod grants;
#[path = "processes/migration.rs"]
mod migration;
#[path = "processes/oauth.rs"]
mod oauth;
#[path = "processes/pins.rs"]
mod pins;
#[path = "processes/three.rs"]
mod three;
#[path = "processes/usage.rs"]
mod usage;
