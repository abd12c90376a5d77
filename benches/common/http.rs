//! A minimal HTTP/1.1 client over one kept-alive connection, for measuring `toolreg mcp --http`
//! per call without a connection setup in every sample. Reads JSON and SSE answers
//! (`Content-Length` or chunked) up to the JSON-RPC response that carries the request's id.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

pub struct Http {
    addr: String,
    w: TcpStream,
    r: BufReader<TcpStream>,
}

pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The JSON-RPC message with the request's id (a JSON body, or the SSE event holding it).
    pub message: Value,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

impl Http {
    pub fn connect(addr: &str) -> Http {
        let w = TcpStream::connect(addr).unwrap();
        w.set_nodelay(true).unwrap();
        let r = BufReader::new(w.try_clone().unwrap());
        Http { addr: addr.to_string(), w, r }
    }

    /// POSTs `body` to /mcp with these headers (one write) and reads the answer to `body`'s id;
    /// a notification (no id) reads only the status and headers of its 202.
    pub fn post(&mut self, headers: &[(&str, &str)], body: &Value) -> Answer {
        let body = serde_json::to_vec(body).unwrap();
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(&body);
        self.w.write_all(&bytes).unwrap();
        let id = serde_json::from_slice::<Value>(&body).unwrap().get("id").cloned();
        self.answer(id)
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.r.read_line(&mut line).unwrap();
        line.trim_end_matches(['\r', '\n']).to_string()
    }

    fn answer(&mut self, id: Option<Value>) -> Answer {
        let status_line = self.line();
        let status = status_line.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("no status line: {status_line:?}"));
        let mut headers = Vec::new();
        loop {
            let l = self.line();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let get = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone());
        let chunked = get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
        let mut body = Vec::new();
        if chunked {
            // Every chunk to the last: the connection is reused for the next request.
            loop {
                let size = usize::from_str_radix(self.line().split(';').next().unwrap().trim(), 16).unwrap();
                if size == 0 {
                    self.line();
                    break;
                }
                let start = body.len();
                body.resize(start + size, 0);
                self.r.read_exact(&mut body[start..]).unwrap();
                self.line();
            }
        } else if let Some(n) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
            body.resize(n, 0);
            self.r.read_exact(&mut body).unwrap();
        }
        let text = String::from_utf8_lossy(&body);
        let message = match id {
            None => Value::Null,
            Some(id) => {
                let sse = get("content-type").is_some_and(|v| v.starts_with("text/event-stream"));
                let candidates: Vec<Value> = if sse {
                    text.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str(d.trim()).ok()).collect()
                } else {
                    serde_json::from_str(&text).into_iter().collect()
                };
                candidates.into_iter().find(|m: &Value| m.get("id") == Some(&id)).unwrap_or_else(|| panic!("no answer to {id} in {status}: {text}"))
            }
        };
        Answer { status, headers, message }
    }
}
