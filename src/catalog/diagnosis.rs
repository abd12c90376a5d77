//! Why a server did not start, for a person to act on (`ServerStatus.diagnosis`, issue 53): a
//! kind, the facts (where a command was looked for, how the process ended, its last stderr
//! lines) and a `message` saying what to do. Wire type (camelCase) the protocol embeds as is.
//! Every text in it has passed the server's redaction (`ServerConfig::redact`).

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::auth::Grant;
use super::config::ServerConfig;
use super::launch::Missing;

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum DiagnosisKind {
    /// The command is on no `PATH` looked in (`lookedIn`).
    NotFound,
    /// The command was found but may not be run (no execute permission, a folder).
    NotExecutable,
    /// The process ended before it answered `initialize` (`exitCode` or `signal`, `stderrTail`).
    Exited,
    /// It did not answer `initialize` within the connect timeout.
    Timeout,
    /// Its sandbox refused it, or it died of what its sandbox denied.
    Sandbox,
    /// An HTTP server refused or could not be reached (`httpStatus` when it answered), or
    /// answered and waits for OAuth authorization (its message says which).
    Http,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    pub kind: DiagnosisKind,
    /// What happened and what to do, in a sentence or three.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The folders searched for `command`, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looked_in: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The server's last stderr lines before it ended, redacted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr_tail: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
}

impl Diagnosis {
    fn new(kind: DiagnosisKind, message: String) -> Diagnosis {
        Diagnosis { kind, message, command: None, looked_in: Vec::new(), exit_code: None, signal: None, stderr_tail: Vec::new(), http_status: None }
    }

    /// A command that was not found, or may not be run.
    pub fn missing(command: &str, missing: &Missing) -> Diagnosis {
        let shown = |dirs: &[PathBuf]| dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>();
        let mut d = match missing {
            Missing::NotFound { looked_in } => {
                let needs = runtime_of(command).map(|r| format!(" `{command}` comes with {r}: install it, or")).unwrap_or_else(|| " Install it, or".into());
                let mut folders = shown(looked_in);
                if folders.len() > 12 {
                    let more = folders.len() - 12;
                    folders.truncate(12);
                    folders.push(format!("{more} more"));
                }
                let message = format!(
                    "`{command}` was not found (looked in {}).{needs} give its full path as `command`, or add its folder to `spawn.paths`.",
                    folders.join(", ")
                );
                Diagnosis { looked_in: shown(looked_in), ..Diagnosis::new(DiagnosisKind::NotFound, message) }
            }
            Missing::NotExecutable { path, looked_in } => {
                let message = format!("`{}` was found but may not be run (is it a folder, or does it lack execute permission? `chmod +x` it).", path.display());
                Diagnosis { looked_in: shown(looked_in), ..Diagnosis::new(DiagnosisKind::NotExecutable, message) }
            }
        };
        d.command = Some(command.to_owned());
        d
    }

    /// A process that ended during `initialize`; `denied`: a refusal its sandbox caused.
    pub fn exited(config: &ServerConfig, command: &str, status: Option<std::process::ExitStatus>, tail: Vec<String>, denied: Option<String>) -> Diagnosis {
        let (code, signal) = code_and_signal(status);
        let how = match (code, signal) {
            (Some(c), _) => format!("exited with code {c}"),
            (_, Some(s)) => format!("was killed by signal {s}"),
            _ => "ended".to_owned(),
        };
        let said = tail.last().map(|l| format!(" Its last words: \"{l}\".")).unwrap_or_default();
        let mut d = match denied {
            Some(line) => Diagnosis::new(
                DiagnosisKind::Sandbox,
                format!("`{command}` {how} after its sandbox refused it: \"{line}\". Open what it needs with `sandbox.read` / `sandbox.write`, or run it with `sandbox: false` if you trust it."),
            ),
            None => Diagnosis::new(
                DiagnosisKind::Exited,
                format!("`{command}` {how} before it answered `initialize`.{said} Usually a missing environment variable, argument or login in the server's configuration: fix what it says, then restart it."),
            ),
        };
        d.command = Some(command.to_owned());
        d.exit_code = code;
        d.signal = signal;
        d.stderr_tail = tail.iter().map(|l| config.redact(l)).collect();
        d.message = config.redact(&d.message);
        d
    }

    /// A process that did not answer `initialize` in time.
    pub fn timeout(config: &ServerConfig, command: &str, ms: u128, tail: Vec<String>) -> Diagnosis {
        let message = format!(
            "`{command}` started but did not answer `initialize` within {ms} ms. A first start that downloads a package (`npx -y`, `uvx`) can take longer: raise this server's `timeouts.connectMs`; check too that it speaks MCP on stdio and writes nothing else to stdout."
        );
        Diagnosis { command: Some(command.to_owned()), stderr_tail: tail.iter().map(|l| config.redact(l)).collect(), ..Diagnosis::new(DiagnosisKind::Timeout, message) }
    }

    /// A sandbox the configuration asks for and the kernel cannot give.
    pub fn sandbox(command: &str, why: &str) -> Diagnosis {
        let message = format!("`{command}` was not started: its {why}. Ask for less (`sandbox: true`, the default profile), or `sandbox: false`.");
        Diagnosis { command: Some(command.to_owned()), ..Diagnosis::new(DiagnosisKind::Sandbox, message) }
    }

    /// A server that answered but waits for OAuth authorization (`waiting`: a flow runs), or
    /// whose authorization failed: `why` is the catalog's reason (the authorization server's
    /// answer, when it gave one). The server was reached: nothing here points at the network.
    /// Its kind stays `http` (SPEC's closed list of kinds); the message tells it apart.
    pub fn authorization(config: &ServerConfig, why: &str, waiting: bool) -> Diagnosis {
        let grant = config.oauth.as_ref().and_then(|o| o.grant).unwrap_or_default();
        let user = grant == Grant::AuthorizationCode;
        let grant_name = serde_json::to_value(grant).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        let why = why.trim_end_matches('.');
        let message = match (waiting, user) {
            (true, true) => format!("The server answered and asks for authorization (OAuth): {why}. Sign in on the authorization page (the host, or the gateway's MCP client, shows it); the server starts once you have."),
            (true, false) => format!("The server answered and asks for authorization (OAuth, `{grant_name}` grant): {why}. It starts once the authorization server has issued a token."),
            (false, true) => format!(
                "The server answered, but its authorization did not complete: {why}. Sign in again (a host that can open the page, or `toolreg auth` for the gateway), or configure an `Authorization` header; then restart the server."
            ),
            (false, false) => format!(
                "The server answered, but its authorization did not complete: {why}. Check the client credentials (`oauth.clientId` and its secret, key or assertion) and the authorization server's answer above; then restart the server."
            ),
        };
        Diagnosis::new(DiagnosisKind::Http, config.redact(&message))
    }

    /// An HTTP server's connect failure (already redacted `why`).
    pub fn http(why: &str, timed_out: bool) -> Diagnosis {
        let status = http_status(why);
        let message = match status {
            _ if timed_out => "The server did not answer `initialize` in time: check the URL, and raise this server's `timeouts.connectMs` if it is slow.".to_owned(),
            Some(401 | 403) => "The server refused the credentials: check the `Authorization` header or sign in again (`toolreg auth`).".to_owned(),
            Some(404) => "Nothing answers at this URL: check its path (often `/mcp`; `/sse` for a legacy SSE server).".to_owned(),
            Some(405) => "The URL refused a POST, and did not answer as a legacy HTTP+SSE endpoint either: check the server's documentation for its MCP URL (often `/mcp`, or `/sse` for legacy SSE).".to_owned(),
            Some(s) if s >= 500 => format!("The server failed (HTTP {s}): try again later, or tell its operator."),
            Some(s) => format!("The server answered HTTP {s} to `initialize`."),
            None => "The server could not be reached: check the URL, the network and any proxy (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`).".to_owned(),
        };
        Diagnosis { http_status: status, ..Diagnosis::new(if timed_out { DiagnosisKind::Timeout } else { DiagnosisKind::Http }, message) }
    }
}

/// The runtime a well-known launcher comes with, for the not-found message.
fn runtime_of(command: &str) -> Option<&'static str> {
    let name = command.rsplit(['/', '\\']).next().unwrap_or(command).to_ascii_lowercase();
    let name = name.trim_end_matches(".exe").trim_end_matches(".cmd");
    Some(match name {
        "npx" | "node" | "npm" | "pnpm" | "yarn" => "Node.js (https://nodejs.org)",
        "uvx" | "uv" => "uv (https://docs.astral.sh/uv)",
        "python" | "python3" | "pip" | "pipx" => "Python (https://python.org)",
        "bun" | "bunx" => "Bun (https://bun.sh)",
        "deno" => "Deno (https://deno.com)",
        "docker" => "Docker (https://docs.docker.com/get-docker)",
        _ => return None,
    })
}

/// The first HTTP error status an error text names (`HTTP 405`, `status: 404`, `405 Method Not Allowed`).
pub(crate) fn http_status(text: &str) -> Option<u16> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(2)).find_map(|i| {
        let digits = &text.get(i..i + 3)?;
        let bounded = (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) && bytes.get(i + 3).is_none_or(|b| !b.is_ascii_alphanumeric());
        let n: u16 = digits.parse().ok().filter(|_| bounded && digits.bytes().all(|b| b.is_ascii_digit()))?;
        (400..600).contains(&n).then_some(n)
    })
}

#[cfg(unix)]
fn code_and_signal(status: Option<std::process::ExitStatus>) -> (Option<i32>, Option<i32>) {
    use std::os::unix::process::ExitStatusExt;
    status.map_or((None, None), |s| (s.code(), s.signal()))
}

#[cfg(not(unix))]
fn code_and_signal(status: Option<std::process::ExitStatus>) -> (Option<i32>, Option<i32>) {
    (status.and_then(|s| s.code()), None)
}

#[cfg(test)]
mod tests {
    #[test]
    fn http_status_is_found_in_the_words_of_an_error() {
        assert_eq!(super::http_status("Unexpected status 405 Method Not Allowed"), Some(405));
        assert_eq!(super::http_status("HTTP 404: not found on port 8080"), Some(404));
        assert_eq!(super::http_status("connection refused (os error 111) at 127.0.0.1:4040"), None);
        assert_eq!(super::http_status("expected 2405"), None);
    }

    #[test]
    fn a_server_that_answered_is_not_sent_to_check_the_network() {
        let json = serde_json::json!({"id": "svc", "name": "Svc", "transport": {"type": "http", "url": "https://svc.example/mcp"},
            "oauth": {"grant": "clientCredentials", "clientId": "svc", "clientSecret": "S3CRET-x"}});
        let config: super::ServerConfig = serde_json::from_value(json).unwrap();
        let failed = super::Diagnosis::authorization(&config, "MCP server svc authorization failed: token request: invalid_client (secret S3CRET-x)", false);
        assert_eq!(failed.kind, super::DiagnosisKind::Http);
        assert!(failed.message.contains("invalid_client") && failed.message.contains("client credentials"), "{}", failed.message);
        assert!(!failed.message.contains("S3CRET-x") && !failed.message.contains("network"), "{}", failed.message);
        let waiting = super::Diagnosis::authorization(&config, "MCP server svc needs authorization; requesting a token (no user needed)", true);
        assert!(waiting.message.contains("`clientCredentials` grant"), "{}", waiting.message);
        // A connect nothing answered keeps its hint.
        assert!(super::Diagnosis::http("connection refused", false).message.contains("could not be reached"));
    }
}
