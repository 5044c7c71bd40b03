//! A real server on a loopback port over a SQLite file in a temp dir, and a
//! minimal HTTP/1.1 client (one connection per request) to talk to it.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use gapless_ledger::Ledger;
use gapless_server::{AppState, ServerConfig, ServerError, Tokens};
use serde_json::Value;

/// A ledger over a fresh SQLite file.
pub fn ledger_at(path: &std::path::Path) -> Ledger {
    let store = gapless_store::SqliteStore::open(path).expect("open the test ledger");
    Ledger::new(Arc::new(store))
}

/// A server running on its own thread and runtime.
pub struct TestServer {
    pub addr: SocketAddr,
    pub dir: tempfile::TempDir,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), ServerError>>>,
}

impl TestServer {
    pub fn start() -> TestServer {
        TestServer::with_config(ServerConfig::default())
    }

    pub fn with_tokens(tokens: Tokens) -> TestServer {
        TestServer::with_config(ServerConfig {
            tokens: Some(tokens),
            ..ServerConfig::default()
        })
    }

    pub fn with_config(config: ServerConfig) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let ledger = ledger_at(&dir.path().join("ledger.db"));
        TestServer::with_ledger(dir, ledger, config)
    }

    /// Serve `ledger` (opened on this thread: the PostgreSQL client must not
    /// be opened or dropped on a runtime thread).
    pub fn with_ledger(dir: tempfile::TempDir, ledger: Ledger, config: ServerConfig) -> TestServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let keep = ledger.clone();
            let result = runtime.block_on(async move {
                let state = AppState::new(ledger, config);
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                gapless_server::serve(listener, state, async move {
                    let _ = rx.await;
                })
                .await
            });
            drop(runtime);
            drop(keep);
            result
        });
        TestServer {
            addr,
            dir,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("ledger.db")
    }

    /// Stop and wait for the server; its result.
    pub fn stop(&mut self) -> Result<(), ServerError> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.thread.take() {
            Some(t) => t.join().expect("the server thread panicked"),
            None => Ok(()),
        }
    }

    pub fn client(&self) -> Client {
        Client {
            addr: self.addr,
            token: None,
        }
    }

    pub fn client_with(&self, token: &str) -> Client {
        Client {
            addr: self.addr,
            token: Some(token.to_string()),
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// A response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The error message of an error answer, checking its shape.
    pub fn error(&self) -> String {
        let v = self.json();
        let obj = v
            .as_object()
            .unwrap_or_else(|| panic!("error is not an object: {v}"));
        assert!(obj.contains_key("detail"), "no detail: {v}");
        let msg = obj["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error message: {v}"))
            .to_string();
        assert!(!msg.contains('\n'), "multi-line error: {msg}");
        msg
    }
}

#[derive(Debug, Clone)]
pub struct Client {
    pub addr: SocketAddr,
    pub token: Option<String>,
}

impl Client {
    pub fn get(&self, path: &str) -> Resp {
        self.send("GET", path, &[], b"")
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Resp {
        self.send(
            "POST",
            path,
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        )
    }

    pub fn post_ndjson(&self, path: &str, body: &str) -> Resp {
        self.send(
            "POST",
            path,
            &[("Content-Type", "application/x-ndjson")],
            body.as_bytes(),
        )
    }

    pub fn put_json(&self, path: &str, body: &Value) -> Resp {
        self.send(
            "PUT",
            path,
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        )
    }

    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
        let mut stream = TcpStream::connect(self.addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.addr
        );
        if let Some(t) = &self.token {
            head.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        stream.write_all(head.as_bytes()).unwrap();
        // A server may answer (413) before reading a large body.
        let _ = stream.write_all(body);
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        parse_response(&raw)
    }
}

fn parse_response(raw: &[u8]) -> Resp {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete response head");
    let head = std::str::from_utf8(&raw[..split]).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        let mut out = Vec::new();
        let mut rest = &body[..];
        loop {
            let eol = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..eol]).unwrap().trim(), 16)
                .unwrap();
            rest = &rest[eol + 2..];
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[..size]);
            rest = &rest[size + 2..];
        }
        body = out;
    }
    Resp {
        status,
        headers,
        body,
    }
}

/// Percent-encode a path segment (everything but unreserved characters).
pub fn enc(segment: &str) -> String {
    let mut out = String::new();
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One event object.
pub fn event(asset: &str, start: &str, end: &str, id: Option<&str>) -> Value {
    let mut v = serde_json::json!({"asset": asset, "start": start, "end": end});
    if let Some(id) = id {
        v["id"] = id.into();
    }
    v
}

/// `2025-06-01T10:{m}:00Z` for minute `m` (0..60).
pub fn at(m: u32) -> String {
    format!("2025-06-01T10:{m:02}:00Z")
}
