//! A webhook receiver for delivery tests: a plain `TcpListener` on a
//! loopback port, a thread per connection, keep-alive, counting every
//! request by path and `Idempotency-Key`, checking `X-Gapless-Signature`
//! with its own HMAC-SHA256. It can answer the first requests 500, hold
//! requests for a while (to provoke a client timeout, or to have a
//! delivery in flight), answer every request 400, and records whether
//! each 2xx answer reached a client that was still there.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::Sha256;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub key: Option<String>,
    /// The signature header matched the body under the receiver's secret
    /// (true when the receiver has no secret and none was sent).
    pub signed: bool,
    pub body: Value,
    pub at: Instant,
    /// What it was answered: 0 when the client was gone before the answer.
    pub status: u16,
}

/// How the receiver behaves.
#[derive(Debug, Clone, Default)]
pub struct Behaviour {
    /// Answer this many requests (the first ones) 500.
    pub fail_first: usize,
    /// Answer every request 500.
    pub fail_all: bool,
    /// Answer every request 400 (a refusal retrying cannot fix).
    pub refuse_all: bool,
    /// Hold this many requests (the first ones) this long before answering.
    pub hang_first: usize,
    pub hang: Duration,
    /// Hold every request this long before answering.
    pub delay: Duration,
}

#[derive(Debug, Default)]
struct State {
    behaviour: Behaviour,
    seen: usize,
    received: Vec<Received>,
    /// Requests being held right now, by path.
    in_flight: Vec<String>,
}

/// The receiver; it stops accepting when dropped (its threads end with
/// their connections).
pub struct Receiver {
    pub url: String,
    secret: Option<String>,
    state: Arc<(Mutex<State>, Condvar)>,
}

impl Receiver {
    pub fn start(secret: Option<&str>, behaviour: Behaviour) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new((
            Mutex::new(State {
                behaviour,
                ..State::default()
            }),
            Condvar::new(),
        ));
        let shared = state.clone();
        let key = secret.map(str::to_string);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (state, key) = (shared.clone(), key.clone());
                std::thread::spawn(move || serve(conn, &state, key.as_deref()));
            }
        });
        Receiver {
            url,
            secret: secret.map(str::to_string),
            state,
        }
    }

    pub fn set(&self, behaviour: Behaviour) {
        let mut s = self.state.0.lock().unwrap();
        s.behaviour = behaviour;
        s.seen = 0;
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.0.lock().unwrap().received.clone()
    }

    /// Wait up to `limit` until `pred` holds of the requests received.
    pub fn wait_for(&self, limit: Duration, pred: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let until = Instant::now() + limit;
        let (lock, cv) = &*self.state;
        let mut s = lock.lock().unwrap();
        loop {
            if pred(&s.received) {
                return s.received.clone();
            }
            let now = Instant::now();
            assert!(
                now < until,
                "receiver: condition not met within {limit:?}; received {:#?}",
                s.received
            );
            s = cv.wait_timeout(s, until - now).unwrap().0;
        }
    }

    /// Wait up to `limit` until a request to a path for which `pred`
    /// holds is being held; its path.
    pub fn wait_in_flight(&self, limit: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let until = Instant::now() + limit;
        let (lock, cv) = &*self.state;
        let mut s = lock.lock().unwrap();
        loop {
            if let Some(p) = s.in_flight.iter().find(|p| pred(p)) {
                return Some(p.clone());
            }
            let now = Instant::now();
            if now >= until {
                return None;
            }
            s = cv.wait_timeout(s, until - now).unwrap().0;
        }
    }
}

fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256={hex}")
}

/// Whether the peer of `conn` has closed its end.
fn peer_gone(conn: &TcpStream) -> bool {
    conn.set_nonblocking(true).unwrap();
    let mut b = [0u8; 1];
    let gone = matches!(conn.peek(&mut b), Ok(0))
        || matches!(conn.peek(&mut b), Err(e) if e.kind() != std::io::ErrorKind::WouldBlock);
    conn.set_nonblocking(false).unwrap();
    gone
}

fn serve(conn: TcpStream, state: &(Mutex<State>, Condvar), secret: Option<&str>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut out = conn.try_clone().unwrap();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let (mut len, mut key, mut sig) = (0usize, None, None);
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (name, value) = h.split_once(':').unwrap();
            let value = value.trim().to_string();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => len = value.parse().unwrap(),
                "idempotency-key" => key = Some(value),
                "x-gapless-signature" => sig = Some(value),
                _ => {}
            }
        }
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let arrived = Instant::now();
        let signed = match secret {
            Some(s) => sig.as_deref() == Some(sign(s, &body).as_str()),
            None => sig.is_none(),
        };
        let (hold, status) = {
            let (lock, cv) = state;
            let mut s = lock.lock().unwrap();
            let n = s.seen;
            s.seen += 1;
            let b = &s.behaviour;
            let hold = if n < b.hang_first { b.hang } else { b.delay };
            let status = if b.refuse_all {
                400
            } else if b.fail_all || n < b.fail_first {
                500
            } else {
                200
            };
            s.in_flight.push(path.clone());
            cv.notify_all();
            (hold, status)
        };
        std::thread::sleep(hold);
        let gone = peer_gone(&conn);
        let answered = !gone
            && out
                .write_all(
                    format!(
                        "HTTP/1.1 {status} {}\r\ncontent-length: 2\r\n\r\nok",
                        if status == 200 { "OK" } else { "Error" }
                    )
                    .as_bytes(),
                )
                .is_ok();
        let (lock, cv) = state;
        let mut s = lock.lock().unwrap();
        if let Some(i) = s.in_flight.iter().position(|p| *p == path) {
            s.in_flight.remove(i);
        }
        s.received.push(Received {
            path,
            key,
            signed,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            at: arrived,
            status: if answered { status } else { 0 },
        });
        cv.notify_all();
        if !answered {
            return;
        }
    }
}
