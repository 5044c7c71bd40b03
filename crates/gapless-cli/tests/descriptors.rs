//! The fault of too many connections, for real: a `gapless serve` process
//! limited to 1,024 open descriptors gets 1,100 idle connections. A fresh
//! client's `GET /healthz` is still answered within seconds, the log does
//! not fill with accept errors, the server does not spin, and once the idle
//! connections are gone requests work as before and SIGTERM stops it.
//!
//! Twice: with the default connection limit (below the descriptor limit, so
//! the longest idle connections make room), and with a limit above the
//! descriptor limit (so accepts fail for want of descriptors, and the
//! longest idle connections are closed to free them).

#![allow(unsafe_code)] // getrlimit, setrlimit, sysconf: the limits under test.

mod common;

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{Gapless, Server};

/// The server's descriptor limit, soft and hard: Linux's usual default.
const SERVER_FILES: u64 = 1024;

/// Idle connections opened: more than the server has descriptors.
const IDLE: usize = 1100;

/// Descriptors this test process needs: the idle connections, its own
/// requests, pipes and whatever the harness holds.
const NEEDED: u64 = 1300;

/// The longest `/healthz` may take with all of them open.
const HEALTHZ_WITHIN: Duration = Duration::from_secs(5);

/// One flood at a time: each needs most of the test process's descriptors
/// and a quiet machine for its timings.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn healthz_is_answered_with_more_idle_connections_than_descriptors() {
    flood(&[]);
}

#[test]
fn accepts_failing_for_want_of_descriptors_free_one_and_are_logged_once() {
    flood(&["--max-connections", "5000"]);
}

fn flood(serve_args: &[&str]) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if let Err(why) = raise_own_descriptor_limit() {
        eprintln!("skipped: {why}");
        return;
    }
    let g = Gapless::new();
    let mut server = Server::start_with(&g, |c| {
        c.args(serve_args);
        limit_descriptors(c, SERVER_FILES);
    });
    let addr: SocketAddr = server
        .url
        .strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("not an http:// address: {}", server.url));
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.pid())).unwrap();
    let files = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("the open files limit");
    assert_eq!(
        files.split_whitespace().nth(3),
        Some(SERVER_FILES.to_string().as_str()),
        "{files}"
    );

    let start = Instant::now();
    let idle: Vec<TcpStream> = (0..IDLE)
        .map(|i| {
            TcpStream::connect_timeout(&addr, Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("idle connection {i}: {e}"))
        })
        .collect();
    let opened = start.elapsed();

    let cpu_before = cpu_seconds(server.pid());
    let window = Instant::now();
    let asked = Instant::now();
    let (status, body) = get(addr, "/healthz", HEALTHZ_WITHIN);
    let healthz_took = asked.elapsed();
    assert_eq!(status, 200, "{body}");
    assert!(healthz_took < HEALTHZ_WITHIN, "{healthz_took:?}");
    // Nothing to do now but hold the idle connections: a server that spins
    // on accept would use a core meanwhile.
    std::thread::sleep(Duration::from_secs(1));
    let cpu = cpu_seconds(server.pid()) - cpu_before;
    let elapsed = window.elapsed().as_secs_f64();
    assert!(
        cpu < elapsed / 2.0,
        "the server used {cpu:.2} s of CPU in {elapsed:.2} s with idle connections"
    );

    let closed = idle.iter().filter(|s| closed_by_server(s)).count();
    let log = server.log();
    let accept_lines = log
        .iter()
        .filter(|l| l.to_ascii_lowercase().contains("accept"))
        .count();
    eprintln!(
        "{IDLE} idle connections opened in {opened:?}; /healthz answered in \
         {healthz_took:?}; server CPU {cpu:.3} s over {elapsed:.2} s; {closed} idle \
         connections closed by the server; {} log lines, {accept_lines} about accepts:\n{}",
        log.len(),
        log.join("\n")
    );
    // It cannot hold more connections than it has descriptors.
    assert!(
        closed > IDLE - SERVER_FILES as usize,
        "only {closed} of {IDLE} idle connections were closed"
    );
    assert!(accept_lines < 10, "{}", log.join("\n"));
    assert!(log.len() < 20, "{}", log.join("\n"));

    // Without the idle connections, the server works as before.
    drop(idle);
    let event =
        r#"{"asset": "orders", "start": "2025-06-01T00:00:00Z", "end": "2025-06-01T01:00:00Z"}"#;
    let (status, body) = post(addr, "/v1/events", event);
    assert_eq!(status, 200, "{body}");
    let (status, body) = get(addr, "/v1/assets", Duration::from_secs(10));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""asset":"orders""#), "{body}");
    for _ in 0..20 {
        assert_eq!(get(addr, "/healthz", Duration::from_secs(10)).0, 200);
    }

    let killed = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(
        server.wait_exit(Duration::from_secs(30)),
        Some(0),
        "serve did not stop cleanly on SIGTERM"
    );
}

/// Raise this process's soft descriptor limit to its hard one; an error
/// when that is too few for the test.
fn raise_own_descriptor_limit() -> Result<(), String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read or write the struct given,
    // which lives for the whole call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(format!(
            "cannot read the descriptor limit: {}",
            std::io::Error::last_os_error()
        ));
    }
    if limit.rlim_max != libc::RLIM_INFINITY && limit.rlim_max < NEEDED {
        return Err(format!(
            "the hard descriptor limit is {}, the test needs {NEEDED}",
            limit.rlim_max
        ));
    }
    if limit.rlim_cur != libc::RLIM_INFINITY && limit.rlim_cur < NEEDED {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
            return Err(format!(
                "cannot raise the descriptor limit: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// Start the command with `n` as its soft and hard descriptor limit.
fn limit_descriptors(cmd: &mut std::process::Command, n: u64) {
    let limit = libc::rlimit {
        rlim_cur: n,
        rlim_max: n,
    };
    // SAFETY: the hook runs in the child between fork and exec, and calls
    // only setrlimit, which is async-signal-safe and touches only `limit`.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// User and system CPU time of process `pid`, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / per_second as f64
}

/// Whether the server has closed `stream` (end of stream or reset), without
/// waiting.
fn closed_by_server(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    let closed = match (&*stream).read(&mut buf) {
        Ok(0) => true,
        Ok(n) => panic!(
            "an idle connection got an answer: {:?}",
            String::from_utf8_lossy(&buf[..n])
        ),
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    };
    stream.set_nonblocking(false).unwrap();
    closed
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build()
        .new_agent()
}

/// `GET path` on a connection of its own, within `timeout`.
fn get(addr: SocketAddr, path: &str, timeout: Duration) -> (u16, String) {
    let mut response = agent(timeout)
        .get(format!("http://{addr}{path}"))
        .header("Connection", "close")
        .call()
        .unwrap_or_else(|e| panic!("GET {path}: no answer within {timeout:?}: {e}"));
    let body = response.body_mut().read_to_string().unwrap();
    (response.status().as_u16(), body)
}

/// `POST path` with a JSON body, on a connection of its own.
fn post(addr: SocketAddr, path: &str, json: &str) -> (u16, String) {
    let mut response = agent(Duration::from_secs(10))
        .post(format!("http://{addr}{path}"))
        .header("Connection", "close")
        .header("Content-Type", "application/json")
        .send(json)
        .unwrap_or_else(|e| panic!("POST {path}: no answer: {e}"));
    let body = response.body_mut().read_to_string().unwrap();
    (response.status().as_u16(), body)
}
