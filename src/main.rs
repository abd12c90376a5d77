//! The `toolreg` command: `serve` (the sidecar), `plan` (a host config's plan as a table),
//! `schema` (write or check `protocol/*.schema.json`), `mcp` (the registry as an MCP server),
//! `auth` (an upstream server's OAuth for `mcp`, from a terminal), `pins`, `approvals` and `audit` (a config's held tools, its remembered approvals, its audit log), `add` (a registry's server into a config).

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use toolreg::logging::LogControl;

#[derive(Parser)]
#[command(name = "toolreg", version, about = "The tool catalog sidecar of an LLM application")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Speak JSON-RPC 2.0 over stdin/stdout with Content-Length framing (what a host spawns).
    Serve {
        /// Write every message in both directions to this transcript file (JSON lines).
        #[arg(long)]
        record: Option<PathBuf>,
        /// Largest frame body accepted; larger frames are answered with an error and skipped.
        #[arg(long, default_value_t = toolreg::transport::DEFAULT_MAX_FRAME_BYTES)]
        max_frame_bytes: usize,
        /// Log to this file instead of stderr.
        #[arg(long)]
        log_file: Option<PathBuf>,
        /// Log level or tracing filter (default: $TOOLREG_LOG, else info).
        #[arg(long)]
        log_level: Option<String>,
    },
    /// Print the exposition plan of a host config file as a table (default: the built-in example).
    Plan {
        /// A host config JSON file (see examples/desktop-host.json).
        config: Option<PathBuf>,
        /// Override the config's context window.
        #[arg(long)]
        context_window: Option<i64>,
        /// Override the config's model id.
        #[arg(long)]
        model: Option<String>,
        /// Print the plan as JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Serve the registry as an MCP server (stdio, or Streamable HTTP on loopback with --http):
    /// the configured MCP servers' tools, planned, behind one server.
    Mcp {
        /// The host config JSON (as `toolreg plan` reads it, with each server's transport), plus
        /// an optional `gateway` block (see docs/gateway.md).
        #[arg(long)]
        config: PathBuf,
        /// Serve Streamable HTTP on this loopback address (e.g. 127.0.0.1:8931) instead of stdio.
        /// Requests need `Authorization: Bearer <token>`: the token is $TOOLREG_MCP_TOKEN, or a
        /// fresh one printed to stderr.
        #[arg(long)]
        http: Option<std::net::SocketAddr>,
        /// Log to this file instead of stderr.
        #[arg(long)]
        log_file: Option<PathBuf>,
        /// Log level or tracing filter (default: $TOOLREG_LOG, else info).
        #[arg(long)]
        log_level: Option<String>,
        /// Connect every enabled server once, print a table of how each one did, and exit:
        /// 0 when all are usable, 1 when one is not, 2 when the config is not usable.
        #[arg(long, conflicts_with = "http")]
        check: bool,
        /// Serve this profile of `gateway.profiles` over stdio instead of the whole gateway
        /// (over HTTP every profile is at /mcp/<profile>).
        #[arg(long, conflicts_with = "http")]
        profile: Option<String>,
    },
    /// Show the held tools of a `toolreg mcp` config (changed or new since approved) and what
    /// changed, or approve them with --approve.
    Pins {
        /// The config `toolreg mcp` runs with.
        #[arg(long)]
        config: PathBuf,
        /// SERVER (all its held tools) or SERVER/TOOL, repeatable: approve their current
        /// definitions for good.
        #[arg(long, num_args = 1..)]
        approve: Vec<String>,
    },
    /// Add a server of an MCP registry to a `toolreg mcp` config, quarantined until you approve
    /// its tools (toolreg pins), its version pinned; secrets stay out of the file.
    Add {
        /// The server's name in the registry, e.g. io.github.owner/server.
        name: String,
        /// The config `toolreg mcp` runs with (made when it does not exist).
        #[arg(long)]
        config: PathBuf,
        /// The registry's URL (default: the config's gateway.mcpRegistry.url, else the official
        /// registry).
        #[arg(long)]
        registry: Option<String>,
        /// One exact version (default: the registry's latest).
        #[arg(long)]
        version: Option<String>,
        /// Which package or remote of the document, by index (default: the first this machine
        /// can run, else the first remote).
        #[arg(long)]
        package: Option<usize>,
        /// An input's value, repeatable; a secret one goes to an owner-only file.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// List the approvals a `toolreg mcp` config's gateway remembers for good (a user's
    /// "always approve"), or revoke them.
    Approvals {
        /// The config `toolreg mcp` runs with.
        #[arg(long)]
        config: PathBuf,
        /// Revoke the remembered approval of this tool (its name as listed).
        #[arg(long, conflicts_with = "all")]
        revoke: Option<String>,
        /// Revoke every remembered approval.
        #[arg(long)]
        all: bool,
    },
    /// Authorize `toolreg mcp` at one OAuth server of the config from this terminal (for an MCP
    /// client that cannot show the authorization page): opens the browser, saves the tokens.
    Auth {
        /// The config `toolreg mcp --config` reads.
        #[arg(long)]
        config: PathBuf,
        /// The server's id (or name) in the config.
        server: String,
    },
    /// Print the audit log that a `toolreg mcp` config's `gateway.audit` names (its rotated
    /// files too), oldest first, as a table or as JSON lines.
    Audit {
        /// The config `toolreg mcp` runs with.
        #[arg(long)]
        config: PathBuf,
        /// Only records from this time on: RFC 3339 (2026-12-03T15:00:00Z) or a duration back
        /// from now (90s, 30m, 1h, 7d).
        #[arg(long)]
        since: Option<String>,
        /// Only records of tools that match: `*` and `?` wildcards, against the wire name, the
        /// upstream tool's name or SERVER/TOOL.
        #[arg(long)]
        tool: Option<String>,
        /// The records as they are stored, one JSON object a line.
        #[arg(long)]
        json: bool,
    },
    /// Write protocol/*.schema.json from the protocol types, or check them with --check.
    Schema {
        #[arg(long, default_value = "protocol")]
        dir: PathBuf,
        #[arg(long)]
        check: bool,
    },
}

/// The gateway's worker stacks (`mcp`): twice tokio's default; only touched pages cost memory.
const GATEWAY_STACK_BYTES: usize = 4 << 20;

const EXAMPLE: &str = include_str!("../examples/desktop-host.json");

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { record, max_frame_bytes, log_file, log_level } => {
            toolreg::os::tune_allocator();
            let log = LogControl::init(log_file.as_deref(), log_level.as_deref());
            install_panic_hook();
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("tokio runtime starts");
            // The loop runs on a worker, not on the main thread: the worker that sees stdin
            // become readable runs it directly, one thread hop less per message.
            let opts = toolreg::server::ServeOptions { max_frame_bytes, record };
            let code = runtime.block_on(async move { tokio::spawn(toolreg::server::serve(opts, log)).await.unwrap_or(1) });
            toolreg::service::Telemetry::global().flush(TELEMETRY_FLUSH);
            // Do not wait for stray blocking tasks: the host is gone or said exit.
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            ExitCode::from(code as u8)
        }
        Command::Mcp { config, http, log_file, log_level, check, profile } => mcp(&config, http, check, profile, log_file.as_deref(), log_level.as_deref()),
        Command::Auth { config, server } => auth(&config, &server),
        Command::Plan { config, context_window, model, json } => plan(config, context_window, model, json),
        Command::Schema { dir, check } => schema(&dir, check),
        Command::Pins { config, approve } => pins(&config, &approve),
        Command::Add { name, config, registry, version, package, set } => {
            let ask = toolreg::gateway::AddAsk { config: &config, name: &name, registry: registry.as_deref(), version: version.as_deref(), package, set: &set };
            add(ask)
        }
        Command::Approvals { config, revoke, all } => approvals(&config, revoke.as_deref(), all),
        Command::Audit { config, since, tool, json } => audit(&config, since.as_deref(), tool.as_deref(), json),
    }
}

/// `toolreg audit`: the records on stdout; 2 when the config names no audit file or a
/// filter does not parse.
#[allow(clippy::print_stdout)]
fn audit(config: &std::path::Path, since: Option<&str>, tool: Option<&str>, json: bool) -> ExitCode {
    use toolreg::service::Service;
    let cfg = match gateway_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let Some(settings) = cfg.gateway.audit else {
        eprintln!("toolreg: {} has no gateway.audit: there is no audit log to read", config.display());
        return ExitCode::from(2);
    };
    let now = time::OffsetDateTime::now_utc();
    let records = match Service::audit_records(std::path::Path::new(&settings.file), since, tool, now) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("toolreg: {e}");
            return ExitCode::from(2);
        }
    };
    if json {
        for r in &records {
            println!("{r}");
        }
    } else {
        print!("{}", Service::audit_table(&records));
    }
    ExitCode::SUCCESS
}

/// The gateway's config file, read and checked; the error already said on stderr.
fn gateway_config(config: &std::path::Path) -> Result<toolreg::gateway::config::GatewayConfig, ExitCode> {
    toolreg::gateway::config::GatewayConfig::read(config).map_err(|e| {
        eprintln!("toolreg: {} is not a usable config: {e}", config.display());
        ExitCode::from(2)
    })
}

fn auth(config: &std::path::Path, server: &str) -> ExitCode {
    let cfg = match gateway_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // Only warnings: the flow's own messages go to stderr as lines for the person.
    let log = LogControl::init(None, Some("warn"));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime starts");
    let outcome = runtime.block_on(toolreg::gateway::authorize_from_terminal(&cfg, server));
    log.flush();
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match outcome {
        Ok(line) => {
            eprintln!("toolreg auth: {line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolreg auth: {e}");
            ExitCode::from(1)
        }
    }
}

#[allow(clippy::print_stdout)]
fn pins(config: &std::path::Path, approve: &[String]) -> ExitCode {
    let cfg = match gateway_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let _log = LogControl::init(None, Some("warn"));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime starts");
    let done = runtime.block_on(toolreg::gateway::pins(cfg, approve));
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match done {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolreg pins: {e}");
            ExitCode::from(1)
        }
    }
}

/// `toolreg add`: 1 when the server cannot be added (the reason on stderr).
#[allow(clippy::print_stdout)]
fn add(ask: toolreg::gateway::AddAsk) -> ExitCode {
    let _log = LogControl::init(None, Some("warn"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime starts");
    match runtime.block_on(toolreg::gateway::add(ask)) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolreg add: {e}");
            ExitCode::from(1)
        }
    }
}

/// `toolreg approvals`: 1 when there is nothing to revoke or no state directory.
#[allow(clippy::print_stdout)]
fn approvals(config: &std::path::Path, revoke: Option<&str>, all: bool) -> ExitCode {
    use toolreg::gateway::Revoke;
    let cfg = match gateway_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let _log = LogControl::init(None, Some("warn"));
    let what = match (revoke, all) {
        (Some(tool), _) => Revoke::Tool(tool),
        (None, true) => Revoke::All,
        (None, false) => Revoke::Nothing,
    };
    match toolreg::gateway::approvals(&cfg, what) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolreg approvals: {e}");
            ExitCode::from(1)
        }
    }
}

/// How long the last spans and metrics may take to leave at exit (a dead collector's cost).
const TELEMETRY_FLUSH: std::time::Duration = std::time::Duration::from_secs(2);

fn mcp(config: &std::path::Path, http: Option<std::net::SocketAddr>, check: bool, profile: Option<String>, log_file: Option<&std::path::Path>, log_level: Option<&str>) -> ExitCode {
    use toolreg::gateway::{self, ConfigFile, Listen};
    let (file, cfg) = match ConfigFile::read(config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("toolreg: {} is not a usable config: {e}", config.display());
            return ExitCode::from(2);
        }
    };
    if check {
        return mcp_check(&cfg, log_file, log_level);
    }
    if let Some(p) = profile.as_deref().filter(|p| !cfg.gateway.profiles.contains_key(*p)) {
        let known: Vec<&str> = cfg.gateway.profiles.keys().map(String::as_str).collect();
        eprintln!("toolreg: --profile {p:?}: {} has no such profile in gateway.profiles (it has: {})", config.display(), if known.is_empty() { "none".into() } else { known.join(", ") });
        return ExitCode::from(2);
    }
    let audit = match cfg.gateway.audit.as_ref().map(|a| toolreg::service::Audit::open(a, toolreg::service::AuditFace::Gateway, None)).transpose() {
        Ok(a) => a.unwrap_or_default(),
        Err(e) => {
            eprintln!("toolreg: gateway.audit: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(t) = &cfg.gateway.telemetry {
        match toolreg::service::Telemetry::start(t, &|k| std::env::var(k).ok()) {
            Ok(t) => {
                t.install();
            }
            Err(e) => {
                eprintln!("toolreg: gateway.telemetry: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let listen = match http {
        None => Listen::Stdio,
        Some(addr) => {
            let token = match std::env::var(gateway::TOKEN_ENV) {
                Ok(t) if !t.trim().is_empty() => t.trim().to_string(),
                _ => match gateway::new_token() {
                    Ok(t) => {
                        eprintln!("toolreg mcp: bearer token {t} (set ${} to choose it)", gateway::TOKEN_ENV);
                        t
                    }
                    Err(e) => {
                        eprintln!("toolreg: {e}");
                        return ExitCode::from(2);
                    }
                },
            };
            Listen::Http { addr, token }
        }
    };
    let log = LogControl::init(log_file, log_level);
    install_panic_hook();
    // A tool call polls rmcp's HTTP server, the call pipeline (code mode's included) and rmcp's
    // client on one worker's stack; a debug build keeps each level's future in its frame as
    // well. The handlers box their futures (`gateway::session`); this is the headroom over
    // tokio's 2 MiB default, for every worker (the HTTP server's too: they are the same).
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_stack_size(GATEWAY_STACK_BYTES).enable_all().build().expect("tokio runtime starts");
    let code = runtime.block_on(async move { tokio::spawn(gateway::run(cfg, listen, Some(file), audit, profile)).await.unwrap_or(1) });
    toolreg::service::Telemetry::global().flush(TELEMETRY_FLUSH);
    log.flush();
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    ExitCode::from(code as u8)
}

/// `toolreg mcp --check`: the table on stdout, the catalog's logs on stderr.
#[allow(clippy::print_stdout)]
fn mcp_check(cfg: &toolreg::gateway::config::GatewayConfig, log_file: Option<&std::path::Path>, log_level: Option<&str>) -> ExitCode {
    let log = LogControl::init(log_file, log_level);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime starts");
    let report = runtime.block_on(toolreg::gateway::check::check(cfg));
    print!("{}", report.render());
    log.flush();
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    ExitCode::from(if report.usable() { 0 } else { 1 })
}

/// Panics are answered -32603 by the server; the hook only makes sure the message goes to
/// stderr (through tracing), never to stdout.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        tracing::error!("panic: {info}");
    }));
}

#[allow(clippy::print_stdout)]
fn plan(config: Option<PathBuf>, context_window: Option<i64>, model: Option<String>, json: bool) -> ExitCode {
    let (text, origin) = match &config {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(t) => (t, path.display().to_string()),
            Err(e) => {
                eprintln!("toolreg: cannot read {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
        None => (EXAMPLE.to_string(), "built-in example (examples/desktop-host.json)".to_string()),
    };
    let cfg: toolreg::hostconfig::HostConfig = match serde_json::from_str(&text) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("toolreg: {origin} is not a valid host config: {e}");
            return ExitCode::from(2);
        }
    };
    // The same `search` as `toolreg mcp` takes: said below the table, refused like the rest.
    let search = match toolreg::gateway::describe_search(cfg.search.as_ref()) {
        Ok(line) => line,
        Err(e) => {
            eprintln!("toolreg: {origin} is not a valid host config: {e}");
            return ExitCode::from(2);
        }
    };
    let (plan, warnings) = match cfg.plan(context_window, model.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("toolreg: {origin}: {e}");
            return ExitCode::from(2);
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&plan).expect("plans serialize"));
    } else {
        println!("{origin}\n");
        print!("{}", toolreg::hostconfig::render_table(&plan, model.as_deref().or(cfg.model.as_deref())));
        println!("{search}");
        println!("{}", toolreg::hostconfig::budget_line(cfg.budget().unwrap_or_default()));
        for w in warnings {
            println!("warning: {} inactive: {}", w.name, w.message);
        }
    }
    ExitCode::SUCCESS
}

#[allow(clippy::print_stdout)]
fn schema(dir: &std::path::Path, check: bool) -> ExitCode {
    let files = toolreg::protocol::schema::generate();
    let mut stale = Vec::new();
    for (name, text) in &files {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.clone());
            if !check {
                if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, text)) {
                    eprintln!("toolreg: cannot write {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
        }
    }
    if check && !stale.is_empty() {
        for p in &stale {
            eprintln!("stale: {}", p.display());
        }
        eprintln!("toolreg: protocol schemas drifted from the types; run `cargo run -- schema`");
        return ExitCode::from(1);
    }
    println!("{} schema files {}", files.len(), if check { "up to date" } else { "written" });
    ExitCode::SUCCESS
}
