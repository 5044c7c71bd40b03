//! Connections are bounded (SPEC §4): one still sending its head is closed
//! after the header timeout, one that is idle after the idle timeout, and at
//! the connection limit the one idle the longest makes room, so `/healthz`
//! is answered, and no request sent is left without its answer. Raw sockets
//! on loopback, each test bounded by its timeouts.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::TestServer;
use gapless_server::ServerConfig;

/// Longer than any test waits for a close: a timeout that does not fire
/// fails the test instead of hanging it.
const NEVER: Duration = Duration::from_secs(60);

/// The short timeout under test.
const SHORT: Duration = Duration::from_secs(1);

fn server(header_timeout: Duration, idle_timeout: Duration) -> TestServer {
    TestServer::with_config(ServerConfig {
        header_timeout,
        idle_timeout,
        ..ServerConfig::default()
    })
}

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    stream
        .set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
}

/// Whether the server has closed `stream`, waiting at most `wait`; an
/// answer arriving instead is a failure.
fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 1024];
    match stream.read(&mut buf) {
        Ok(0) => true,
        Ok(n) => panic!(
            "an answer instead of a close: {:?}",
            String::from_utf8_lossy(&buf[..n])
        ),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => false,
        Err(e) if e.kind() == ErrorKind::ConnectionReset => true,
        Err(e) => panic!("reading: {e}"),
    }
}

/// Wait for the server to close `stream`; how long that took from `since`.
fn wait_closed(stream: &mut TcpStream, since: Instant) -> Duration {
    assert!(closed_within(stream, NEVER), "still open after {NEVER:?}");
    since.elapsed()
}

/// One keep-alive `GET /healthz` on `stream`, its answer read whole.
fn healthz_on(stream: &mut TcpStream) {
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let text = read_answer(stream).unwrap_or_else(|e| panic!("no answer: {e}"));
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let head = &text[..text.find("\r\n\r\n").unwrap_or(text.len())];
    assert!(
        !head.to_ascii_lowercase().contains("connection: close"),
        "{text}"
    );
}

/// One answer read whole from `stream` (its head and its `Content-Length`
/// of body), or what came before the server closed or reset it.
fn read_answer(stream: &mut TcpStream) -> Result<String, String> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => 0,
            Err(e) => panic!("reading: {e}"),
        };
        if n == 0 {
            return Err(format!("closed after {:?}", String::from_utf8_lossy(&raw)));
        }
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw);
        let Some(head_end) = text.find("\r\n\r\n") else {
            continue;
        };
        let length: usize = text[..head_end]
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse().unwrap())
            })
            .expect("a Content-Length");
        if raw.len() >= head_end + 4 + length {
            return Ok(text.into_owned());
        }
    }
}

/// Between `SHORT` (less a margin for timer slack) and a few times it.
fn assert_about_short(took: Duration, what: &str) {
    assert!(
        took >= SHORT - Duration::from_millis(200) && took < SHORT * 4,
        "{what} closed after {took:?}, expected about {SHORT:?}"
    );
}

#[test]
fn a_half_request_line_is_closed_after_the_header_timeout() {
    let server = server(SHORT, NEVER);
    let mut stream = connect(server.addr);
    let start = Instant::now();
    stream.write_all(b"GET /heal").unwrap();
    assert_about_short(wait_closed(&mut stream, start), "half a request line");
}

#[test]
fn headers_trickling_in_are_closed_after_the_header_timeout() {
    let server = server(SHORT, NEVER);
    let mut stream = connect(server.addr);
    let start = Instant::now();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: test\r\n")
        .unwrap();
    // A header every 250 ms: each in time, the head as a whole not.
    let mut closed = false;
    for i in 0..40 {
        if stream
            .write_all(format!("X-Slow-{i}: 1\r\n").as_bytes())
            .is_err()
            || closed_within(&mut stream, Duration::from_millis(250))
        {
            closed = true;
            break;
        }
    }
    assert!(closed, "still open after 40 headers over 10 s");
    assert_about_short(start.elapsed(), "a trickle of headers");
}

#[test]
fn an_idle_connection_is_closed_after_the_idle_timeout() {
    let server = server(NEVER, SHORT);
    // Keep-alive: two requests on one connection, then nothing.
    let mut stream = connect(server.addr);
    healthz_on(&mut stream);
    std::thread::sleep(SHORT / 2);
    healthz_on(&mut stream);
    let answered = Instant::now();
    assert_about_short(
        wait_closed(&mut stream, answered),
        "an idle keep-alive connection",
    );
    // A connection that never sends anything.
    let mut silent = connect(server.addr);
    let start = Instant::now();
    assert_about_short(wait_closed(&mut silent, start), "a silent connection");
}

#[test]
fn at_the_limit_the_longest_idle_connection_makes_room_and_busy_ones_are_kept() {
    let server = TestServer::with_config(ServerConfig {
        max_connections: 3,
        ..ServerConfig::default()
    });
    // The oldest connection is in a handler, reading a body it has half of.
    let body = br#"{"asset": "a", "start": "2025-06-01T00:00:00Z", "end": "2025-06-01T01:00:00Z"}"#;
    let mut busy = connect(server.addr);
    busy.write_all(
        format!(
            "POST /v1/events HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    busy.write_all(&body[..10]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // Two idle ones fill the limit; the first is idle the longest.
    let mut older = connect(server.addr);
    std::thread::sleep(Duration::from_millis(300));
    let mut newer = connect(server.addr);
    std::thread::sleep(Duration::from_millis(300));

    let start = Instant::now();
    let health = server.client().get("/healthz");
    assert_eq!(health.status, 200, "{}", health.text());
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "/healthz at the limit took {:?}",
        start.elapsed()
    );
    assert!(
        closed_within(&mut older, Duration::from_secs(5)),
        "the longest idle connection was not closed"
    );
    assert!(
        !closed_within(&mut newer, Duration::from_millis(200)),
        "a newer idle connection was closed"
    );
    // The busy one finishes its request and is answered.
    busy.write_all(&body[10..]).unwrap();
    busy.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut answer = String::new();
    busy.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""accepted":1"#), "{answer}");
}

#[test]
fn stopping_does_not_wait_for_idle_connections() {
    let mut server = server(SHORT, NEVER);
    let mut keep_alive = connect(server.addr);
    healthz_on(&mut keep_alive);
    let _silent = connect(server.addr);
    let mut partial = connect(server.addr);
    partial.write_all(b"GET /heal").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    let (done, stopped) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(server.stop()));
    // Idle ones close at once; one still sending its head within the header
    // timeout.
    stopped
        .recv_timeout(SHORT * 4)
        .unwrap_or_else(|_| panic!("not stopped after {:?}", start.elapsed()))
        .expect("a clean stop");
    assert!(closed_within(&mut keep_alive, Duration::from_secs(1)));
    assert!(closed_within(&mut partial, Duration::from_secs(1)));
}

/// One request sent whole on a fresh connection, its answer read whole:
/// the status line, or what came before the server closed; and the
/// connection, kept open.
fn one_request(addr: SocketAddr, request: &[u8]) -> (String, TcpStream) {
    let mut stream = connect(addr);
    stream.write_all(request).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let status = match read_answer(&mut stream) {
        Ok(text) => text.lines().next().unwrap_or_default().to_string(),
        Err(closed) => closed,
    };
    (status, stream)
}

/// Three times as many clients as the connection limit, at once, each
/// sending its whole request (a `GET /healthz`, or a `POST /v1/events`) as
/// soon as it is connected, and keeping it open once answered: every one
/// is answered. Only connections idle between requests (the answered ones)
/// make room; none that sent a request is closed without its answer.
#[test]
fn at_the_limit_every_request_sent_is_answered() {
    const LIMIT: usize = 20;
    let server = TestServer::with_config(ServerConfig {
        max_connections: LIMIT,
        ..ServerConfig::default()
    });
    let addr = server.addr;
    let body = r#"{"asset": "a", "start": "2025-06-01T00:00:00Z", "end": "2025-06-01T01:00:00Z"}"#;
    let post = format!(
        "POST /v1/events HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let get = "GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n".to_string();
    let start = std::sync::Arc::new(std::sync::Barrier::new(3 * LIMIT));
    let clients: Vec<_> = (0..3 * LIMIT)
        .map(|i| {
            let request = if i % 2 == 0 {
                get.clone()
            } else {
                post.clone()
            };
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                one_request(addr, request.as_bytes())
            })
        })
        .collect();
    let (answers, _open): (Vec<String>, Vec<TcpStream>) =
        clients.into_iter().map(|c| c.join().unwrap()).unzip();
    let unanswered: Vec<&String> = answers
        .iter()
        .filter(|a| !a.starts_with("HTTP/1.1 200"))
        .collect();
    assert!(
        unanswered.is_empty(),
        "{} of {} not answered: {unanswered:?}",
        unanswered.len(),
        answers.len()
    );
}
