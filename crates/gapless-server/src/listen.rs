//! Accepting and serving connections, with bounds: no connection holds a
//! descriptor for long without a request, and there are never so many that
//! the process runs out of descriptors.
//!
//! - **Header timeout** ([`ServerConfig::header_timeout`]): hyper's own,
//!   armed whenever a connection waits for a request head (from the accept,
//!   then from the end of each answer). A connection still sending its
//!   request line or headers then, or sending nothing, is closed.
//! - **Idle timeout** ([`ServerConfig::idle_timeout`]): a connection none of
//!   whose requests is in a handler, on which no byte has moved either way
//!   for that long, is closed. This covers what the header timeout does not
//!   see: an answer the client stopped reading.
//! - **Connection limit** ([`ServerConfig::max_connections`]): each
//!   connection holds a permit. A new connection is always accepted while
//!   there are descriptors (the default limit leaves some free, see
//!   [`crate::default_max_connections`]); when no permit is free, the
//!   connection that has been idle the longest is closed and the new one
//!   takes its permit. So a fresh client's `GET /healthz` is answered
//!   however many idle connections are open, as it would be with a free
//!   slot; refusing to accept at the limit would instead leave it in the
//!   kernel's backlog behind the idle ones. Idle means between requests
//!   ([`Phase`]): its last answer written out and no byte of another read
//!   since, or nothing read at all [`FRESH_GRACE`] after the accept. A
//!   connection whose request has begun to arrive, is in a handler or is
//!   being answered is never closed to make room: every request read is
//!   answered. When no connection is idle the new one waits for the first
//!   that is, or closes: each is bounded by the header timeout, the request
//!   timeout and the idle timeout.
//! - **Accept errors**: a failed accept that concerns only that connection
//!   (reset, aborted) is skipped. Any other (out of descriptors, of memory)
//!   is retried after a back-off doubling from 25 ms to 1 s; running out of
//!   descriptors also closes the longest idle connection, which frees one.
//!   A burst of them (less than 10 s apart) is logged once when it starts
//!   and once, with its count, when it is over.
//! - **Shutdown**: stop accepting, close the listener, ask every connection
//!   to shut down gracefully (hyper closes idle ones at once and lets a
//!   request in progress finish; one still sending its head has the header
//!   timeout), and wait until all are closed.
//!
//! - **TLS** ([`ServerConfig::tls`]): the handshake is the connection's
//!   first step in its own task, bounded by the header timeout
//!   ([`crate::tls`]); until it is done the connection counts as fresh (so
//!   past the grace it may make room) and is closed when the server stops.
//!   The connection's tracking sits above TLS, on the bytes hyper reads
//!   and writes.
//!
//! HTTP/1 only: axum's `http2` feature is not enabled in this workspace.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

use crate::ServerConfig;

/// The first wait after a failed accept.
const FIRST_BACKOFF: Duration = Duration::from_millis(25);

/// The longest wait between failed accepts: long enough not to spin on a
/// process out of descriptors, short enough to pick up again soon after.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// How long a connection that has sent nothing since it was accepted is
/// not yet idle: a client sends its request right after connecting, so
/// its first bytes are on their way (or unread in the socket, the
/// connection's task not yet run); longer than TCP's initial
/// retransmission timeout of 1 s (RFC 6298), so a request whose first
/// segment was lost once still arrives in time. Past it, a silent
/// connection (a browser's speculative one, a probe) may make room.
const FRESH_GRACE: Duration = Duration::from_secs(2);

/// The bounds of [`serve`], from the server's configuration, and TLS if
/// configured.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    pub tls: Option<crate::tls::Tls>,
}

impl Limits {
    /// The bounds of `config`, its TLS certificate read.
    ///
    /// # Errors
    ///
    /// [`crate::ServerError::Config`] for a certificate or key that cannot
    /// be used.
    pub(crate) fn of(config: &ServerConfig) -> Result<Limits, crate::ServerError> {
        Ok(Limits {
            header_timeout: config.header_timeout,
            idle_timeout: config.idle_timeout,
            max_connections: config.max_connections,
            tls: config.tls.as_ref().map(crate::tls::Tls::load).transpose()?,
        })
    }
}

/// Serve `router` on `listener` within `limits` until `shutdown` completes,
/// then until every connection is closed.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let max = limits.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    let permits = Arc::new(Semaphore::new(max));
    let open = Arc::new(Open::default());
    let (stop, stopping) = watch::channel(());
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let mut shutdown = pin!(shutdown);
    let mut failures = Failures::default();
    let mut full = Full::default();
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                failures.succeeded();
                stream
            }
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                let wait = failures.failed(&e);
                let freed = if is_out_of_descriptors(&e) {
                    open.evict_longest_idle()
                } else {
                    None
                };
                // Out of descriptors with one just freed, accept again as
                // soon as it is closed; otherwise wait out the back-off.
                let retry = async {
                    match freed {
                        Some(conn) => {
                            let _ = tokio::time::timeout(wait, conn.closed.notified()).await;
                        }
                        None => tokio::time::sleep(wait).await,
                    }
                };
                tokio::select! {
                    () = &mut shutdown => break,
                    () = retry => continue,
                }
            }
        };
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = make_room(&permits, &open, &mut full, max) => permit,
        };
        let conn = open.insert();
        tokio::spawn(serve_connection(
            stream,
            conn,
            open.clone(),
            permit,
            router.clone(),
            http.clone(),
            (limits.idle_timeout, limits.header_timeout),
            limits.tls.clone(),
            stopping.clone(),
        ));
    }
    drop(listener);
    drop(stopping);
    // Every connection shuts down gracefully; each returns its permit.
    let _ = stop.send(());
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    let _ = permits.acquire_many(all).await;
}

/// A free permit, closing the longest idle connection when none is.
async fn make_room(
    permits: &Arc<Semaphore>,
    open: &Open,
    full: &mut Full,
    max: usize,
) -> OwnedSemaphorePermit {
    loop {
        if let Ok(permit) = permits.clone().try_acquire_owned() {
            full.left();
            return permit;
        }
        full.reached(max);
        if open.evict_longest_idle().is_some() {
            full.evicted += 1;
            // The closed connection's task returns its permit at once.
            return permits
                .clone()
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
        }
        // No connection is idle: wait until one is (told when an answer is
        // written out or a connection closes), or until a silent one's
        // grace has passed.
        let _ = tokio::time::timeout(FRESH_GRACE, open.room.notified()).await;
    }
}

/// Serve one connection (over TLS when `tls` is given) until it closes, is
/// closed for being idle, or is evicted; shut it down gracefully when the
/// server stops.
#[allow(clippy::too_many_arguments)] // one task's parts, passed once
async fn serve_connection(
    stream: TcpStream,
    conn: Arc<Conn>,
    open: Arc<Open>,
    permit: OwnedSemaphorePermit,
    router: Router,
    http: http1::Builder,
    (idle_timeout, handshake_timeout): (Duration, Duration),
    tls: Option<crate::tls::Tls>,
    stopping: watch::Receiver<()>,
) {
    // Declared first, so dropped last: after the stream is closed.
    let _registered = Registered {
        conn: conn.clone(),
        open: open.clone(),
        _permit: permit,
    };
    match tls {
        None => drive(stream, conn, open, router, http, idle_timeout, stopping).await,
        Some(tls) => {
            // A connection in its handshake has read no request: closed at
            // once to make room or when the server stops, as an idle one.
            let mut stop = stopping.clone();
            let stream = tokio::select! {
                stream = tls.accept(stream, handshake_timeout) => stream,
                () = conn.evict.notified() => None,
                _ = stop.changed() => None,
            };
            if let Some(stream) = stream {
                drive(stream, conn, open, router, http, idle_timeout, stopping).await;
            }
        }
    }
}

/// Serve HTTP on `stream` until it closes, is closed for being idle, or is
/// evicted; shut it down gracefully when the server stops.
async fn drive<S>(
    stream: S,
    conn: Arc<Conn>,
    open: Arc<Open>,
    router: Router,
    http: http1::Builder,
    idle_timeout: Duration,
    mut stopping: watch::Receiver<()>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(Tracked::new(stream, conn.clone(), open.clone()));
    let service = {
        let conn = conn.clone();
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let handling = Handling::start(&conn, &open);
            let answer = router.clone().oneshot(request);
            let conn = conn.clone();
            async move {
                let answer = answer.await;
                drop(handling);
                answer.map(|response| response.map(|body| Answer { body, conn }))
            }
        })
    };
    let mut connection = pin!(http.serve_connection(io, service));
    let mut draining = false;
    loop {
        let idle_at = tokio::time::Instant::from_std(conn.idle_deadline(idle_timeout));
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "connection closed");
                }
                break;
            }
            // Sent, or the server gone: either way, stop after what is in
            // progress.
            _ = stopping.changed(), if !draining => {
                draining = true;
                connection.as_mut().graceful_shutdown();
            }
            () = conn.evict.notified() => break,
            () = tokio::time::sleep_until(idle_at) => {
                if conn.idle_for() >= idle_timeout {
                    tracing::debug!("closing a connection idle for {idle_timeout:?}");
                    break;
                }
            }
        }
    }
}

/// The connections open, to find the one to close when the limit is
/// reached.
#[derive(Debug, Default)]
struct Open {
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
    next_id: AtomicU64,
    /// Signalled when a connection leaves its handler or closes: the accept
    /// loop may be waiting for one it can close.
    room: Notify,
}

impl Open {
    fn insert(&self) -> Arc<Conn> {
        let conn = Arc::new(Conn {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            born: Instant::now(),
            last_io_ms: AtomicU64::new(0),
            handling: AtomicUsize::new(0),
            phase: AtomicU8::new(Phase::Fresh as u8),
            evict: Notify::new(),
            closed: Notify::new(),
        });
        self.lock().insert(conn.id, conn.clone());
        conn
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Close the connection idle the longest, if any is idle (between
    /// requests, see [`Conn::is_idle`]); that one.
    fn evict_longest_idle(&self) -> Option<Arc<Conn>> {
        let mut conns = self.lock();
        let victim = conns
            .values()
            .filter(|c| c.is_idle())
            .min_by_key(|c| c.last_io())
            .map(|c| c.id);
        let conn = victim.and_then(|id| conns.remove(&id))?;
        conn.evict.notify_one();
        Some(conn)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.conns.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One open connection, as the accept loop sees it.
#[derive(Debug)]
struct Conn {
    id: u64,
    born: Instant,
    /// When a byte last moved, or a request left its handler: milliseconds
    /// after `born`.
    last_io_ms: AtomicU64,
    /// Its requests in a handler (at most one: HTTP/1 answers in order).
    handling: AtomicUsize,
    /// Where it is between its requests: a [`Phase`].
    phase: AtomicU8,
    /// Signalled to close it to make room.
    evict: Notify,
    /// Signalled once it is closed and its descriptor free.
    closed: Notify,
}

/// Where a connection is in its requests, which decides whether it may be
/// closed to make room: only between requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Phase {
    /// Accepted, nothing read yet: idle once [`FRESH_GRACE`] has passed.
    Fresh,
    /// A request's bytes have been read: it is arriving, in its handler,
    /// or being answered.
    Busy,
    /// The answer's body is all given to hyper; its last bytes may still be
    /// in hyper's buffer.
    Answered,
    /// The answer is written out and nothing has been read since: idle.
    Between,
}

impl Conn {
    fn phase(&self) -> u8 {
        self.phase.load(Ordering::Acquire)
    }

    /// Idle between requests: may be closed to make room without cutting a
    /// request that has begun to arrive or an answer.
    fn is_idle(&self) -> bool {
        if self.handling.load(Ordering::Acquire) > 0 {
            return false;
        }
        match self.phase() {
            p if p == Phase::Between as u8 => true,
            p if p == Phase::Fresh as u8 => self.born.elapsed() >= FRESH_GRACE,
            _ => false,
        }
    }

    /// Bytes were read: a request is arriving.
    fn reading(&self) {
        self.phase.store(Phase::Busy as u8, Ordering::Release);
    }

    /// The answer's body is done (or dropped unsent, as for `HEAD`).
    fn answered(&self) {
        let _ = self.phase.compare_exchange(
            Phase::Busy as u8,
            Phase::Answered as u8,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }

    /// Everything hyper wrote is out: an answer that was done is written.
    /// Whether the connection became idle by it.
    fn flushed(&self) -> bool {
        self.phase
            .compare_exchange(
                Phase::Answered as u8,
                Phase::Between as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    fn touch(&self) {
        let ms = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_io_ms.store(ms, Ordering::Relaxed);
    }

    fn last_io(&self) -> Instant {
        self.born + Duration::from_millis(self.last_io_ms.load(Ordering::Relaxed))
    }

    /// How long it has been idle: zero while a request is in a handler.
    fn idle_for(&self) -> Duration {
        if self.handling.load(Ordering::Acquire) > 0 {
            Duration::ZERO
        } else {
            self.last_io().elapsed()
        }
    }

    /// When it will have been idle for `limit`, unless something happens
    /// first.
    fn idle_deadline(&self, limit: Duration) -> Instant {
        Instant::now() + limit.saturating_sub(self.idle_for())
    }
}

/// A connection's registration and permit, given up when its task ends
/// however it ends.
struct Registered {
    conn: Arc<Conn>,
    open: Arc<Open>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.open.remove(self.conn.id);
        self.open.room.notify_one();
        self.conn.closed.notify_one();
    }
}

/// A request in its handler: the connection is not idle meanwhile.
struct Handling {
    conn: Arc<Conn>,
    open: Arc<Open>,
}

impl Handling {
    fn start(conn: &Arc<Conn>, open: &Arc<Open>) -> Handling {
        conn.handling.fetch_add(1, Ordering::AcqRel);
        Handling {
            conn: conn.clone(),
            open: open.clone(),
        }
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        // Idle from now, not from the request's last byte.
        self.conn.touch();
        if self.conn.handling.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.open.room.notify_one();
        }
    }
}

/// An answer's body as the router made it, telling its connection when
/// hyper is done with it: the connection is then idle once hyper's buffer
/// is written out ([`Tracked`]'s flush).
struct Answer {
    body: axum::body::Body,
    conn: Arc<Conn>,
}

impl hyper::body::Body for Answer {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.conn.answered();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        // hyper drops a body it need not read to its end (`HEAD`, a known
        // length all sent): done as well.
        self.conn.answered();
    }
}

/// A connection's stream, noting when bytes move and when an answer is
/// written out, and writing hyper's own answer to a request it cannot
/// parse in SPEC §4's words ([`crate::malformed`]).
struct Tracked<S> {
    stream: S,
    conn: Arc<Conn>,
    open: Arc<Open>,
    /// The answer being written instead of hyper's head.
    replacing: Option<Replacing>,
}

/// [`crate::malformed::replacement`] being written in place of a head of
/// `consumed` bytes, `written` of it so far.
struct Replacing {
    bytes: Vec<u8>,
    written: usize,
    consumed: usize,
}

impl<S: AsyncWrite + Unpin> Tracked<S> {
    fn new(stream: S, conn: Arc<Conn>, open: Arc<Open>) -> Tracked<S> {
        Tracked {
            stream,
            conn,
            open,
            replacing: None,
        }
    }

    /// Write the replacement of `head` (`len` bytes as hyper wrote them),
    /// if it is hyper's answer to a malformed request: `None` when it is
    /// not, otherwise the poll of writing it, `len` once all of it is out.
    fn poll_replace(
        &mut self,
        cx: &mut Context<'_>,
        head: Option<&[u8]>,
        len: usize,
    ) -> Option<Poll<io::Result<usize>>> {
        if self.replacing.is_none() {
            let bytes = crate::malformed::replacement(head?)?;
            self.replacing = Some(Replacing {
                bytes,
                written: 0,
                consumed: len,
            });
        }
        let r = self.replacing.as_mut().expect("set above");
        while r.written < r.bytes.len() {
            match Pin::new(&mut self.stream).poll_write(cx, &r.bytes[r.written..]) {
                Poll::Ready(Ok(0)) => {
                    return Some(Poll::Ready(Err(io::ErrorKind::WriteZero.into())))
                }
                Poll::Ready(Ok(n)) => {
                    r.written += n;
                    self.conn.touch();
                }
                Poll::Ready(Err(e)) => return Some(Poll::Ready(Err(e))),
                Poll::Pending => return Some(Poll::Pending),
            }
        }
        let consumed = r.consumed;
        self.replacing = None;
        Some(Poll::Ready(Ok(consumed)))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Tracked<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.conn.touch();
            self.conn.reading();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Tracked<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(polled) = self.poll_replace(cx, Some(buf), buf.len()) {
            return polled;
        }
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.conn.touch();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        // hyper's own answer is a head alone: one slice.
        let mut slices = bufs.iter().filter(|b| !b.is_empty());
        let head = match (slices.next(), slices.next()) {
            (Some(one), None) => Some(&one[..]),
            _ => None,
        };
        let len = bufs.iter().map(|b| b.len()).sum();
        if let Some(polled) = self.poll_replace(cx, head, len) {
            return polled;
        }
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.conn.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.stream).poll_flush(cx);
        // hyper flushes its own buffer into the stream before flushing the
        // stream: all it wrote is out.
        if matches!(polled, Poll::Ready(Ok(()))) && self.conn.flushed() {
            self.open.room.notify_one();
        }
        polled
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// An accept error about that one connection only: skip it.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

#[cfg(unix)]
fn is_out_of_descriptors(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

#[cfg(not(unix))]
fn is_out_of_descriptors(_: &io::Error) -> bool {
    false
}

/// Failed accepts: the back-off, and logging each burst once.
#[derive(Debug, Default)]
struct Failures {
    /// Failures since the last accept that worked: the back-off doubles
    /// with each.
    consecutive: u32,
    burst: Option<Burst>,
}

/// Failed accepts with less than [`QUIET`] between them, even when some
/// accepts worked in between (a process at its descriptor limit accepts one
/// connection each time another closes).
#[derive(Debug)]
struct Burst {
    first: Instant,
    last: Instant,
    count: u64,
}

/// The time without a failed accept that ends a burst.
const QUIET: Duration = Duration::from_secs(10);

impl Failures {
    /// Note a failure; how long to wait before the next accept.
    fn failed(&mut self, e: &io::Error) -> Duration {
        let now = Instant::now();
        match &mut self.burst {
            Some(burst) if now.duration_since(burst.last) < QUIET => {
                burst.last = now;
                burst.count += 1;
            }
            _ => {
                self.end_burst();
                tracing::error!(
                    "accept error: {e}; retrying with a back-off of up to {} s, the \
                     errors that follow within {} s of each other are counted, not logged",
                    MAX_BACKOFF.as_secs_f64(),
                    QUIET.as_secs()
                );
                self.burst = Some(Burst {
                    first: now,
                    last: now,
                    count: 1,
                });
            }
        }
        let backoff = FIRST_BACKOFF.saturating_mul(1 << self.consecutive.min(16));
        self.consecutive = self.consecutive.saturating_add(1);
        backoff.min(MAX_BACKOFF)
    }

    fn succeeded(&mut self) {
        self.consecutive = 0;
        if self
            .burst
            .as_ref()
            .is_some_and(|b| b.last.elapsed() >= QUIET)
        {
            self.end_burst();
        }
    }

    /// Report the burst that ended, if it had more than the error logged.
    fn end_burst(&mut self) {
        if let Some(burst) = self.burst.take().filter(|b| b.count > 1) {
            tracing::warn!(
                errors = burst.count,
                "accepting connections again after {} accept errors over {:.1} s",
                burst.count,
                burst.last.duration_since(burst.first).as_secs_f64()
            );
        }
    }
}

/// A stretch of time at the connection limit, logged once.
#[derive(Debug, Default)]
struct Full {
    at_limit: bool,
    evicted: u64,
}

impl Full {
    fn reached(&mut self, max: usize) {
        if !self.at_limit {
            self.at_limit = true;
            tracing::warn!(
                max_connections = max,
                "at the connection limit ({max}): closing the longest idle connections to \
                 make room for new ones"
            );
        }
    }

    fn left(&mut self) {
        if self.at_limit {
            tracing::info!(
                closed = self.evicted,
                "below the connection limit again, after closing {} idle connections",
                self.evicted
            );
            self.at_limit = false;
            self.evicted = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    /// `serve` stays spawnable: its future is `Send`.
    #[allow(dead_code)]
    fn serve_is_send(listener: tokio::net::TcpListener, state: crate::AppState) {
        fn send<T: Send>(_: T) {}
        send(crate::serve(listener, state, async {}));
    }
}
