//! A real server on a loopback port over a SQLite file in a temp dir, an HTTP
//! client (`ureq`, one connection per request) to talk to it, and
//! [`raw_exchange`] for the few requests whose raw bytes are the point.

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

/// Talks to a [`TestServer`] through `ureq` (see [`agent`]); each request
/// has a connection of its own (`Connection: close`), so no request rides on
/// a connection another one left.
#[derive(Debug, Clone)]
pub struct Client {
    pub addr: SocketAddr,
    pub token: Option<String>,
}

/// The bound on a whole request, connect to last byte of the answer.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// Answers are read whole, however large (ureq's default stops at 10 MiB).
const ANSWER_LIMIT: u64 = 1 << 30;

/// The connection's buffers, each way: 16 KiB rather than ureq's 128 KiB.
/// Tests run unoptimized, where zero-filling two 128 KiB buffers takes
/// milliseconds before a request's first byte goes out (the shutdown test
/// wants its big request in flight 20 ms after it starts). 16 KiB holds any
/// request or answer head here; bodies stream through.
const BUFFER: usize = 16 * 1024;

/// Every status is read as an answer, no redirect is followed, a request
/// has [`TIMEOUT`] in all. One per request: with a connection per request
/// there is nothing to pool, and `Client` stays a plain (unwind-safe) value.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(TIMEOUT))
        .input_buffer_size(BUFFER)
        .output_buffer_size(BUFFER)
        .build()
        .new_agent()
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

    /// Any method, with `headers` and `body` (sent with its length even when
    /// empty or on a GET); panics on a transport error (no answer).
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
        let mut request = ureq::http::Request::builder()
            .method(method)
            .uri(format!("http://{}{path}", self.addr))
            .header("Connection", "close");
        if let Some(t) = &self.token {
            request = request.header("Authorization", format!("Bearer {t}"));
        }
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let request = request
            .body(body)
            .unwrap_or_else(|e| panic!("{method} {path}: not a request: {e}"));
        let mut response = agent()
            .run(request)
            .unwrap_or_else(|e| panic!("{method} {path}: no answer: {e}"));
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| {
                let v = v
                    .to_str()
                    .unwrap_or_else(|e| panic!("{method} {path}: header {k}: {e}"));
                (k.as_str().to_string(), v.to_string())
            })
            .collect();
        let body = response
            .body_mut()
            .with_config()
            .limit(ANSWER_LIMIT)
            .read_to_vec()
            .unwrap_or_else(|e| panic!("{method} {path}: the answer's body: {e}"));
        Resp {
            status,
            headers,
            body,
        }
    }

    /// POST `body` over a raw socket, through [`raw_exchange`]: for a server
    /// that answers before it has read the whole body.
    pub fn raw_post(&self, path: &str, content_type: &str, body: &[u8]) -> Resp {
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: {content_type}\r\n",
            self.addr
        );
        if let Some(t) = &self.token {
            request.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut request = request.into_bytes();
        request.extend_from_slice(body);
        raw_exchange(self.addr, &request)
    }
}

/// Raw on purpose: write `request` as it is, then read until the server
/// closes. For the requests an HTTP client cannot or will not send as the
/// test means them: here, a body the server answers (413, 503) before it has
/// read it all. A client such as `ureq` sends the whole body before it reads
/// an answer, so the server closing under the rest of the body is a transport
/// error to it; this helper ignores a failed write and reads the answer the
/// server gave. The answer is parsed just enough for the assertions: status
/// line, headers, a `Content-Length` or close-delimited body (never chunked).
pub fn raw_exchange(addr: SocketAddr, request: &[u8]) -> Resp {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(TIMEOUT)).unwrap();
    // The server may answer, and close, before it has read all of `request`.
    let _ = stream.write_all(request);
    let mut raw = Vec::new();
    // A reset after the answer (the unread rest of the request) is no error:
    // what was read before it is kept.
    let _ = stream.read_to_end(&mut raw);
    parse_answer(&raw)
}

/// An HTTP/1.1 answer as read from its connection: head, then a body of
/// `Content-Length` bytes (never chunked).
pub fn parse_answer(raw: &[u8]) -> Resp {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| {
            panic!(
                "no complete answer head: {:?}",
                String::from_utf8_lossy(raw)
            )
        });
    let head = std::str::from_utf8(&raw[..split]).expect("an ASCII answer head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP/1.1 status line: {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (k, v) = l
                .split_once(':')
                .unwrap_or_else(|| panic!("not a header line: {l:?}"));
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect();
    let mut resp = Resp {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    };
    assert!(
        resp.header("transfer-encoding").is_none(),
        "a chunked answer: {:?}",
        resp.headers
    );
    if let Some(n) = resp.header("content-length") {
        let n: usize = n.parse().expect("a Content-Length");
        assert!(
            resp.body.len() >= n,
            "a body cut short: {} of {n} bytes",
            resp.body.len()
        );
        resp.body.truncate(n);
    }
    resp
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
