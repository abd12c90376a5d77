//! HTTP MCP servers through a proxy (issue 53): a server whose host name no resolver knows is
//! reached only through a forward proxy on loopback, named by `HTTP_PROXY` in toolreg's
//! environment or by the server's own `proxy` (its credentials redacted); `NO_PROXY` sends it
//! around the proxy. The proxy is a few lines here (no proxy server is installed): it forwards
//! each connection to the fixture server, recording the request heads it saw.
mod support;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use support::*;

const HOST: &str = "mcp.toolreg-test.invalid";

/// A forward proxy: every connection goes to `upstream` (the fixture), whatever it names;
/// absolute-form request lines pass as they are (HTTP/1.1 servers take them).
struct Proxy {
    addr: String,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let seen = heads.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                let (seen, upstream) = (seen.clone(), upstream.clone());
                std::thread::spawn(move || forward(client, &upstream, &seen));
            }
        });
        Proxy { addr, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// Reads each request head as it passes (to record it) and copies the bytes both ways.
fn forward(mut client: TcpStream, upstream: &str, seen: &Mutex<Vec<String>>) {
    let Ok(mut server) = TcpStream::connect(upstream) else { return };
    let mut back = server.try_clone().unwrap();
    let mut to_client = client.try_clone().unwrap();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut back, &mut to_client);
        let _ = to_client.shutdown(std::net::Shutdown::Both);
    });
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match client.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut out = buf[..n].to_vec();
        let text = String::from_utf8_lossy(&buf[..n]).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            if ["POST ", "GET ", "DELETE "].iter().any(|m| text.starts_with(m)) {
                seen.lock().unwrap().push(text[..end].to_string());
                out = [origin_form(&text[..end], upstream).into_bytes(), buf[end..n].to_vec()].concat();
            }
        }
        if server.write_all(&out).is_err() {
            break;
        }
    }
    let _ = server.shutdown(std::net::Shutdown::Write);
}

/// The head as the origin takes it from a proxy: `POST /mcp`, `Host` the upstream (the
/// fixture, like rmcp's servers, refuses a Host it does not serve).
fn origin_form(head: &str, upstream: &str) -> String {
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.splitn(3, ' ');
    let (method, target, version) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.strip_prefix("http://").map_or(target, |rest| rest.find('/').map_or("/", |at| &rest[at..]));
    let mut out = format!("{method} {path} {version}");
    for line in lines {
        let line = if line.to_ascii_lowercase().starts_with("host:") { format!("host: {upstream}") } else { line.to_string() };
        out.push_str("\r\n");
        out.push_str(&line);
    }
    out
}

fn settled(s: &mut Sidecar, id: &str) -> Value {
    s.server_in(id, &["ready", "error"])
}

fn echo(s: &mut Sidecar, id: &str) -> (String, bool) {
    s.ok_past_notes("registry/syncMcp", json!({}));
    let r = s.ok_past_notes("tool/invoke", json!({"name": format!("mcp__{id}__echo"), "arguments": {"via": "the proxy"}}));
    (r["output"]["value"].to_string(), r["isError"] == true)
}

/// The fixture over HTTP and a proxy to it; the URL names a host only the proxy "knows".
fn setup() -> (tempfile::TempDir, HttpFixture, Proxy, String) {
    let dir = tempfile::tempdir().unwrap();
    let fixture = HttpFixture::start(dir.path(), &[]);
    let port = fixture.url.rsplit(':').next().unwrap().split('/').next().unwrap().to_string();
    let proxy = Proxy::start(format!("127.0.0.1:{port}"));
    let url = format!("http://{HOST}:{port}/mcp");
    (dir, fixture, proxy, url)
}

#[test]
fn http_proxy_in_the_environment_reaches_a_server_no_resolver_knows() {
    let (_dir, _fixture, proxy, url) = setup();
    let mut s = Sidecar::spawn_with(&[], &[("HTTP_PROXY", &format!("http://{}", proxy.addr)), ("NO_PROXY", "")]);
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": [{"id": "far", "name": "far", "transport": {"type": "http", "url": url}}]}));
    let far = settled(&mut s, "far");
    assert_eq!(far["state"], "ready", "{far}");
    let (text, is_error) = echo(&mut s, "far");
    assert!(!is_error && text.contains("the proxy"), "{text}");
    let heads = proxy.heads();
    assert!(heads.iter().any(|h| h.starts_with(&format!("POST http://{HOST}:"))), "{heads:?}");
    s.shutdown();

    // NO_PROXY names it: toolreg goes direct, and no resolver knows the host.
    let before = proxy.heads().len();
    let mut s = Sidecar::spawn_with(&[], &[("http_proxy", &format!("http://{}", proxy.addr)), ("no_proxy", ".toolreg-test.invalid")]);
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": [{"id": "far", "name": "far", "transport": {"type": "http", "url": url}}]}));
    let far = settled(&mut s, "far");
    assert_eq!(far["state"], "error", "{far}");
    assert_eq!(far["diagnosis"]["kind"], "http", "{far}");
    assert_eq!(proxy.heads().len(), before, "{:?}", proxy.heads());
    s.shutdown();
}

#[test]
fn a_servers_own_proxy_is_used_and_its_password_never_shown() {
    let (_dir, _fixture, proxy, url) = setup();
    let password = "pr0xyPassw0rd-9f3";
    let own = format!("http://alice:{password}@{}", proxy.addr);
    let mut s = Sidecar::spawn_with(&[], &[("HTTP_PROXY", ""), ("http_proxy", "")]);
    s.ok("initialize", json!({}));
    s.ok("catalog/setServers", json!({"servers": [
        {"id": "far", "name": "far", "transport": {"type": "http", "url": url}, "proxy": own},
        {"id": "direct", "name": "direct", "transport": {"type": "http", "url": url}}
    ]}));
    let far = settled(&mut s, "far");
    assert_eq!(far["state"], "ready", "{far}");
    let (text, is_error) = echo(&mut s, "far");
    assert!(!is_error && text.contains("the proxy"), "{text}");
    let heads = proxy.heads();
    // Basic alice:<password>, as the proxy received it.
    let basic = data_encoding::BASE64.encode(format!("alice:{password}").as_bytes());
    let want = format!("proxy-authorization: basic {}", basic.to_ascii_lowercase());
    assert!(!heads.is_empty() && heads.iter().all(|h| h.to_ascii_lowercase().contains(&want)), "{heads:?}");
    // The other server has no proxy: it cannot resolve the host.
    let direct = settled(&mut s, "direct");
    assert_eq!(direct["state"], "error", "{direct}");
    let all = s.ok_past_notes("catalog/status", json!({})).to_string();
    assert!(!all.contains(password), "{all}");
    s.shutdown();
}
