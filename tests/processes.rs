//! Several real toolreg processes over one state directory (issue 63): a host's sidecar and
//! `toolreg mcp` gateways, as on a desktop, each doing what a user does at about the same time.
//! One module per kind of shared state; `migration` opens a directory an older release wrote,
//! `crash` kills a writer mid-write.
mod support;

#[path = "processes/audit.rs"]
mod audit;
#[path = "processes/crash.rs"]
mod crash;
#[path = "processes/migration.rs"]
mod migration;
