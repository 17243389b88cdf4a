//! One keep-alive HTTP/1.1 connection to a target, blocking, in the
//! caller's thread: a `POST` with a JSON body, its status and body back.
//!
//! Why not a general client: the harness sends one request at a time and
//! waits for its answer, and reqwest's blocking client runs a tokio runtime
//! on a thread of its own, so every request crossed threads twice (a
//! channel, a futex wake, an epoll wait on the other side). Measured with
//! `cargo bench -p resonate-runner --bench cpu`, that hand-off was most of
//! the harness's CPU per step with responses only. Here a request is one
//! `write` and, for a body that fits the buffer, one `read`; requests
//! [`Conn::queue`]d together go out in one `write` (HTTP/1.1 pipelining)
//! and their answers are read in order, the bytes of the next kept.
//!
//! What it speaks: `Content-Length` and `chunked` bodies, a body ended by
//! the connection's close, `Connection: close`, informational (1xx)
//! answers skipped. The request timeout bounds the whole exchange, connect
//! included. A connection idle for a second is replaced before use (Node.js
//! closes idle ones after 5 s), and one the server said it closes
//! (`Connection: close`) after its answer. A request is never sent twice:
//! a server that dropped the connection may have applied it, and the
//! concurrent run counts an operation in flight when its server died as
//! done before the crash or never. Every read re-arms `TCP_QUICKACK`
//! ([`quickack`]), so a server that leaves Nagle's algorithm on never
//! waits for a delayed acknowledgement between pipelined answers.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::TargetError;

/// A connection idle this long is replaced rather than trusted.
const IDLE: Duration = Duration::from_secs(1);
/// Headers an answer may have.
const MAX_HEADERS: usize = 64;
/// A head (status line and headers) longer than this is not HTTP.
const MAX_HEAD: usize = 64 * 1024;

/// Where to connect and what to ask for.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// `host[:port]` as the URL spells it, for the `Host` header and messages.
    authority: String,
    /// The host and port to resolve.
    host: String,
    port: u16,
    /// The request path (`/`, or the URL's path with a `/` after it).
    path: String,
}

impl Endpoint {
    /// From an `http://` URL (already checked by [`super::url::check`]).
    pub fn of(url: &str) -> Option<Endpoint> {
        let u = url::Url::parse(url).ok()?;
        let host = match u.host()? {
            url::Host::Domain(d) => d.to_string(),
            url::Host::Ipv4(ip) => ip.to_string(),
            url::Host::Ipv6(ip) => ip.to_string(),
        };
        let port = u.port_or_known_default()?;
        let authority = match u.port() {
            Some(p) => format!("{}:{p}", u.host_str()?),
            None => u.host_str()?.to_string(),
        };
        let path = format!("{}/", u.path().trim_end_matches('/'));
        Some(Endpoint {
            authority,
            host,
            port,
            path,
        })
    }
}

/// A keep-alive connection (opened on first use).
pub struct Conn {
    endpoint: Endpoint,
    timeout: Duration,
    stream: Option<Stream>,
    /// The requests queued and not yet written, reused from call to call.
    out: Vec<u8>,
    /// How many requests `out` holds.
    queued: usize,
    /// Requests written whose answers are not read yet (HTTP/1.1
    /// pipelining: answers come back in the order of the requests).
    owed: usize,
}

/// An open connection, its read buffer and when it was last used.
struct Stream {
    tcp: TcpStream,
    buf: Vec<u8>,
    /// Bytes of `buf` already consumed.
    pos: usize,
    /// Bytes of `buf` read.
    end: usize,
    read_timeout: Duration,
    used: Instant,
}

/// Why an exchange failed, before it becomes a [`TargetError`].
enum Failure {
    /// The connection died (its I/O error).
    Dead(io::Error),
    /// Anything else.
    Fault(TargetError),
}

impl Conn {
    /// A connection to `endpoint`; nothing is opened until the first call.
    pub fn new(endpoint: Endpoint, timeout: Duration) -> Conn {
        Conn {
            endpoint,
            timeout,
            stream: None,
            out: Vec::with_capacity(1024),
            queued: 0,
            owed: 0,
        }
    }

    /// `POST` `body` (JSON) and read the answer: its HTTP status and body.
    /// `kind` names the request in error messages. Answers still owed to
    /// earlier [`Conn::queue`]d requests come first: read them before.
    #[cfg(test)]
    pub fn post(&mut self, kind: &str, body: &[u8]) -> Result<(u16, Vec<u8>), TargetError> {
        assert_eq!(self.owed + self.queued, 0, "post with answers owed");
        self.queue(body);
        self.answer(kind)
    }

    /// Queue a `POST` of `body` (JSON), written with every other queued
    /// one by the next [`Conn::answer`]: several requests in one `write`,
    /// their answers read in order (HTTP/1.1 pipelining).
    pub fn queue(&mut self, body: &[u8]) {
        write!(
            self.out,
            "POST {} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\naccept: */*\r\ncontent-length: {}\r\n\r\n",
            self.endpoint.path,
            self.endpoint.authority,
            body.len()
        )
        .expect("writing to a Vec");
        self.out.extend_from_slice(body);
        self.queued += 1;
    }

    /// Requests queued or written whose answers are not read yet.
    pub fn owed(&self) -> usize {
        self.owed + self.queued
    }

    /// The answer to the oldest request not answered yet (writing the
    /// queued ones first): its HTTP status and body. `kind` names it in
    /// error messages. After a fault the connection is dropped with every
    /// answer still owed: none of those requests is sent again.
    pub fn answer(&mut self, kind: &str) -> Result<(u16, Vec<u8>), TargetError> {
        assert!(self.owed() > 0, "an answer read with no request sent");
        let deadline = Instant::now() + self.timeout;
        self.flush(kind, deadline)
            .and_then(|()| self.read_one(kind, deadline))
            .map_err(|f| self.fault(kind, f))
    }

    /// The fault a failure is; the connection is not used again, and the
    /// answers it owed are given up.
    fn fault(&mut self, kind: &str, f: Failure) -> TargetError {
        self.stream = None;
        self.out.clear();
        self.queued = 0;
        self.owed = 0;
        match f {
            Failure::Fault(e) => e,
            Failure::Dead(e) => io_fault(kind, &e),
        }
    }

    /// Write the queued requests, in one `write`: connect first if needed
    /// (replacing a connection idle too long, when it owes nothing).
    fn flush(&mut self, kind: &str, deadline: Instant) -> Result<(), Failure> {
        if self.queued == 0 {
            return Ok(());
        }
        if self.owed == 0 {
            if self
                .stream
                .as_ref()
                .is_some_and(|s| s.used.elapsed() > IDLE)
            {
                self.stream = None;
            }
        } else if self.stream.is_none() {
            return Err(Failure::Fault(closed_owing(kind, self.owed)));
        }
        if self.stream.is_none() {
            let tcp = connect(&self.endpoint, kind, deadline).map_err(Failure::Fault)?;
            self.stream = Some(Stream {
                tcp,
                buf: vec![0; 16 * 1024],
                pos: 0,
                end: 0,
                read_timeout: Duration::ZERO,
                used: Instant::now(),
            });
        }
        let s = self.stream.as_mut().expect("just opened");
        if self.owed == 0 {
            s.pos = 0;
            s.end = 0;
        }
        s.tcp.write_all(&self.out).map_err(Failure::Dead)?;
        self.owed += self.queued;
        self.queued = 0;
        self.out.clear();
        Ok(())
    }

    /// Read the oldest owed answer.
    fn read_one(&mut self, kind: &str, deadline: Instant) -> Result<(u16, Vec<u8>), Failure> {
        let Some(s) = self.stream.as_mut() else {
            // Closed by the server after an earlier answer.
            return Err(Failure::Fault(closed_owing(kind, self.owed)));
        };
        let answer = s.read_answer(kind, deadline, self.owed > 1)?;
        self.owed -= 1;
        s.used = Instant::now();
        if answer.close {
            self.stream = None;
        }
        Ok((answer.status, answer.body))
    }
}

/// A connection the server closed while pipelined requests were still
/// owed an answer: they may or may not have been applied.
fn closed_owing(kind: &str, owed: usize) -> TargetError {
    TargetError::Unreachable(format!(
        "{kind}: the target closed the connection with {owed} pipelined request(s) unanswered, which it may or may not have applied (`--pipeline 1` sends one request at a time)"
    ))
}

/// A whole answer.
struct Answer {
    status: u16,
    body: Vec<u8>,
    /// The server will close the connection (or has).
    close: bool,
}

/// How the body of an answer is delimited.
enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
}

impl Stream {
    /// Read one answer, skipping informational ones; `more`: the answers
    /// of later requests follow it (pipelined), so bytes past it are theirs.
    fn read_answer(
        &mut self,
        kind: &str,
        deadline: Instant,
        more: bool,
    ) -> Result<Answer, Failure> {
        self.compact();
        loop {
            let (status, framing, close, head_len) = self.read_head(kind, deadline)?;
            self.pos = head_len;
            if (100..200).contains(&status) {
                self.compact();
                continue;
            }
            let garbage = |what: &str| {
                Failure::Fault(TargetError::Garbage(format!(
                    "{kind}: HTTP {status}, {what}"
                )))
            };
            let body = match framing {
                Framing::Length(n) => {
                    while self.end - self.pos < n {
                        if self.fill(kind, deadline)? == 0 {
                            return Err(garbage("the body ended before its content-length"));
                        }
                    }
                    let body = self.buf[self.pos..self.pos + n].to_vec();
                    self.pos += n;
                    body
                }
                Framing::Chunked => self.read_chunked(kind, deadline).map_err(|e| match e {
                    Failure::Dead(_) => garbage("the chunked body ended early"),
                    other => other,
                })?,
                Framing::UntilClose => {
                    while self.fill(kind, deadline)? > 0 {}
                    let body = self.buf[self.pos..self.end].to_vec();
                    self.pos = self.end;
                    return Ok(Answer {
                        status,
                        body,
                        close: true,
                    });
                }
            };
            // Bytes past the last answer owed are an answer nobody asked
            // for: do not keep a connection that is out of step.
            let close = close || (!more && self.pos != self.end);
            return Ok(Answer {
                status,
                body,
                close,
            });
        }
    }

    /// Drop the consumed bytes.
    fn compact(&mut self) {
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
    }

    /// Read until a whole head is buffered and parse it: the status, the
    /// body's framing, whether the connection closes after, the head's
    /// length.
    fn read_head(
        &mut self,
        kind: &str,
        deadline: Instant,
    ) -> Result<(u16, Framing, bool, usize), Failure> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut resp = httparse::Response::new(&mut headers);
            match resp.parse(&self.buf[self.pos..self.end]) {
                Ok(httparse::Status::Complete(n)) => {
                    let status = resp.code.unwrap_or(0);
                    let (framing, close) = framing(&resp, status).map_err(|what| {
                        Failure::Fault(TargetError::Garbage(format!("{kind}: {what}")))
                    })?;
                    return Ok((status, framing, close, self.pos + n));
                }
                Ok(httparse::Status::Partial) if self.end - self.pos < MAX_HEAD => {}
                Ok(httparse::Status::Partial) => {
                    return Err(Failure::Fault(TargetError::Garbage(format!(
                        "{kind}: an HTTP head longer than {MAX_HEAD} bytes"
                    ))))
                }
                Err(e) => {
                    let shown =
                        String::from_utf8_lossy(&self.buf[self.pos..self.end.min(self.pos + 200)])
                            .into_owned();
                    return Err(Failure::Fault(TargetError::Garbage(format!(
                        "{kind}: not an HTTP answer ({e}): {shown:?}"
                    ))));
                }
            }
            let had = self.end - self.pos;
            match self.fill(kind, deadline) {
                Ok(0) if had == 0 => {
                    return Err(Failure::Fault(TargetError::Unreachable(format!(
                        "{kind}: the target closed the connection without answering"
                    ))));
                }
                Ok(0) => {
                    return Err(Failure::Fault(TargetError::Garbage(format!(
                        "{kind}: the connection closed in the middle of an HTTP head"
                    ))))
                }
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// A `chunked` body, decoded.
    fn read_chunked(&mut self, kind: &str, deadline: Instant) -> Result<Vec<u8>, Failure> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line(kind, deadline)?;
            let size = line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size, 16).map_err(|_| {
                Failure::Fault(TargetError::Garbage(format!(
                    "{kind}: a chunk size that is not hex: {line:?}"
                )))
            })?;
            if size == 0 {
                // Trailers, up to the empty line.
                while !self.read_line(kind, deadline)?.is_empty() {}
                return Ok(body);
            }
            while self.end - self.pos < size + 2 {
                if self.fill(kind, deadline)? == 0 {
                    return Err(Failure::Dead(io::ErrorKind::UnexpectedEof.into()));
                }
            }
            body.extend_from_slice(&self.buf[self.pos..self.pos + size]);
            self.pos += size + 2;
        }
    }

    /// One CRLF-ended line (without its end).
    fn read_line(&mut self, kind: &str, deadline: Instant) -> Result<String, Failure> {
        loop {
            if let Some(i) = self.buf[self.pos..self.end]
                .windows(2)
                .position(|w| w == b"\r\n")
            {
                let line = String::from_utf8_lossy(&self.buf[self.pos..self.pos + i]).into_owned();
                self.pos += i + 2;
                return Ok(line);
            }
            if self.fill(kind, deadline)? == 0 {
                return Err(Failure::Dead(io::ErrorKind::UnexpectedEof.into()));
            }
        }
    }

    /// Read more into the buffer, within the deadline: the bytes read (0
    /// at the end of the stream).
    fn fill(&mut self, kind: &str, deadline: Instant) -> Result<usize, Failure> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(Failure::Fault(timeout(kind)));
        }
        // The socket's timeout is reset only when it is more than a
        // millisecond off the deadline: no system call in the usual case,
        // and the bound stays within 1 ms of the request timeout.
        if self.read_timeout.is_zero()
            || remaining.abs_diff(self.read_timeout) > Duration::from_millis(1)
        {
            self.tcp
                .set_read_timeout(Some(remaining))
                .map_err(|e| Failure::Fault(io_fault(kind, &e)))?;
            self.read_timeout = remaining;
        }
        // The buffer stays initialised to its length: a read never clears
        // it first. It grows only for an answer larger than it.
        if self.buf.len() - self.end < 8 * 1024 {
            let grown = (self.buf.len() * 2).max(16 * 1024);
            self.buf.resize(grown, 0);
        }
        let n = loop {
            match self.tcp.read(&mut self.buf[self.end..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => break r,
            }
        }
        .map_err(|e| Failure::Fault(io_fault(kind, &e)))?;
        quickack(&self.tcp);
        self.end += n;
        Ok(n)
    }
}

/// Have the kernel acknowledge what arrives next at once (Linux's
/// `TCP_QUICKACK`, which it drops again on its own: set after every read).
/// A server that leaves Nagle's algorithm on holds its second answer of
/// two until the first is acknowledged, and a delayed acknowledgement
/// waits 40 ms: against such a server a pipelined run stalled on every
/// window, 15 times slower than one request at a time.
fn quickack(tcp: &TcpStream) {
    #[cfg(target_os = "linux")]
    let _ = socket2::SockRef::from(tcp).set_tcp_quickack(true);
    #[cfg(not(target_os = "linux"))]
    let _ = tcp;
}

/// The framing of an answer's body and whether the connection closes
/// after it (RFC 9112 §6.3).
fn framing(resp: &httparse::Response, status: u16) -> Result<(Framing, bool), String> {
    let mut length = None;
    let mut chunked = false;
    let mut close = resp.version == Some(0);
    for h in resp.headers.iter() {
        // Only the three headers read here are decoded: an answer carries
        // several more (date, content-type, ...), and this runs for each.
        let value = || String::from_utf8_lossy(h.value);
        if h.name.eq_ignore_ascii_case("content-length") {
            let value = value();
            let n = value.trim().parse::<usize>().map_err(|_| {
                format!("HTTP {status}, a content-length that is not a number: {value:?}")
            })?;
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value()
                .split(',')
                .next_back()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked"));
        } else if h.name.eq_ignore_ascii_case("connection") {
            let value = value();
            let has = |token: &str| {
                value
                    .split(',')
                    .any(|t| t.trim().eq_ignore_ascii_case(token))
            };
            if has("close") {
                close = true;
            } else if has("keep-alive") {
                close = false;
            }
        }
    }
    let framing = if status == 204 || status == 304 || (100..200).contains(&status) {
        Framing::Length(0)
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    Ok((framing, close))
}

/// Open a connection to the first address of `endpoint` that accepts,
/// within the deadline.
fn connect(endpoint: &Endpoint, kind: &str, deadline: Instant) -> Result<TcpStream, TargetError> {
    let addrs: Vec<SocketAddr> = (endpoint.host.as_str(), endpoint.port)
        .to_socket_addrs()
        .map_err(|e| {
            TargetError::Unreachable(format!(
                "{kind}: cannot resolve {}: {e}",
                endpoint.authority
            ))
        })?
        .collect();
    let mut last = None;
    for addr in addrs {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(timeout(kind));
        }
        match TcpStream::connect_timeout(&addr, remaining) {
            Ok(tcp) => {
                let set = tcp
                    .set_nodelay(true)
                    .and_then(|()| tcp.set_write_timeout(Some(remaining)));
                set.map_err(|e| io_fault(kind, &e))?;
                quickack(&tcp);
                return Ok(tcp);
            }
            Err(e) => last = Some((addr, e)),
        }
    }
    Err(match last {
        Some((_, e)) if is_timeout(&e) => timeout(kind),
        Some((addr, e)) => TargetError::Unreachable(format!(
            "{kind}: cannot connect to {} ({addr}): {e}",
            endpoint.authority
        )),
        None => TargetError::Unreachable(format!(
            "{kind}: {} resolves to no address",
            endpoint.authority
        )),
    })
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

fn timeout(kind: &str) -> TargetError {
    TargetError::Timeout(format!("{kind}: no answer within the request timeout"))
}

/// An I/O error as a target fault: a timeout, or the connection lost.
fn io_fault(kind: &str, e: &io::Error) -> TargetError {
    if is_timeout(e) {
        timeout(kind)
    } else {
        TargetError::Unreachable(format!("{kind}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::net::TcpListener;

    /// A server that answers each request on one connection with the next
    /// of `answers` (raw bytes), then closes it; the URL.
    fn serve(answers: Vec<&'static [u8]>) -> String {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut r = BufReader::new(c.try_clone().unwrap());
            for a in answers {
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    r.read_line(&mut line).unwrap();
                    if line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                r.read_exact(&mut body).unwrap();
                c.write_all(a).unwrap();
            }
        });
        url
    }

    fn conn(url: &str) -> Conn {
        Conn::new(Endpoint::of(url).unwrap(), Duration::from_secs(5))
    }

    #[test]
    fn length_chunked_informational_and_close_delimited_answers_are_read() {
        let url = serve(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n[1,\r\n2;x=y\r\n2]\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n\r\n\"end\"",
        ]);
        let mut c = conn(&url);
        assert_eq!(c.post("a", b"{}").unwrap(), (200, b"{}".to_vec()));
        assert_eq!(c.post("b", b"{}").unwrap(), (404, b"[1,2]".to_vec()));
        // The third answer has no length: its body ends with the connection.
        assert_eq!(c.post("c", b"{}").unwrap(), (200, b"\"end\"".to_vec()));
        assert!(
            c.stream.is_none(),
            "a close-delimited answer ends the connection"
        );
    }

    #[test]
    fn a_truncated_body_is_garbage_and_a_refused_connection_unreachable() {
        let url = serve(vec![b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}"]);
        let e = conn(&url).post("a", b"{}").unwrap_err();
        assert!(matches!(e, TargetError::Garbage(_)), "{e}");
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        drop(l);
        let e = conn(&url).post("a", b"{}").unwrap_err();
        assert!(matches!(e, TargetError::Unreachable(_)), "{e}");
    }

    #[test]
    fn a_silent_server_times_out() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let mut c = Conn::new(Endpoint::of(&url).unwrap(), Duration::from_millis(100));
        let e = c.post("a", b"{}").unwrap_err();
        assert!(matches!(e, TargetError::Timeout(_)), "{e}");
        drop(l);
    }

    /// A connection is replaced when the server says it closes it, and
    /// when it sat idle for a second (a server may have closed it
    /// silently); a request is never sent again on its own.
    #[test]
    fn a_connection_the_server_closes_is_replaced_not_retried() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let answers: [&[u8]; 3] = [
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        ];
        let served = std::thread::spawn(move || {
            let mut requests = 0;
            for a in answers {
                // One request per connection, then the server closes it.
                let (mut c, _) = l.accept().unwrap();
                let mut buf = [0u8; 4096];
                let _ = c.read(&mut buf).unwrap();
                c.write_all(a).unwrap();
                requests += 1;
            }
            requests
        });
        let mut c = conn(&url);
        assert_eq!(c.post("a", b"{}").unwrap().0, 200);
        assert!(c.stream.is_none(), "closed as the server said");
        assert_eq!(c.post("b", b"{}").unwrap().0, 200);
        // Closed silently by the server; idle past a second, replaced.
        std::thread::sleep(IDLE + Duration::from_millis(200));
        assert_eq!(c.post("c", b"{}").unwrap().0, 200);
        assert_eq!(served.join().unwrap(), 3, "each request sent once");
    }

    /// A connection that dies under a request is a fault of that request,
    /// not a reason to send it again.
    #[test]
    fn a_connection_closed_without_an_answer_is_a_fault() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf).unwrap();
            c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                .unwrap();
            let _ = c.read(&mut buf).unwrap();
            // The second request is read, then the connection dropped.
        });
        let mut c = conn(&url);
        assert_eq!(c.post("a", b"{}").unwrap().0, 200);
        let e = c.post("b", b"{}").unwrap_err();
        assert!(matches!(e, TargetError::Unreachable(_)), "{e}");
    }

    /// Pipelined requests go out in one write and their answers are read
    /// in order, even when they arrive together in one segment.
    #[test]
    fn pipelined_answers_are_read_in_order_from_one_write() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let served = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            // All three requests, before any answer is written.
            while got.windows(4).filter(|w| w == b"POST").count() < 3 || !got.ends_with(b"\"c\"") {
                let n = c.read(&mut buf).unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            c.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n\"a\"HTTP/1.1 404 No\r\nContent-Length: 3\r\n\r\n\"b\"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n\"c\"",
            )
            .unwrap();
            let _ = c.read(&mut buf);
        });
        let mut c = conn(&url);
        for body in [b"\"a\"", b"\"b\"", b"\"c\""] {
            c.queue(body);
        }
        assert_eq!(c.owed(), 3);
        assert_eq!(c.answer("a").unwrap(), (200, b"\"a\"".to_vec()));
        assert_eq!(c.answer("b").unwrap(), (404, b"\"b\"".to_vec()));
        assert_eq!(c.answer("c").unwrap(), (200, b"\"c\"".to_vec()));
        assert_eq!(c.owed(), 0);
        assert!(c.stream.is_some(), "kept: nothing past the last answer");
        drop(c);
        served.join().unwrap();
    }

    /// A server that closes the connection after one of several pipelined
    /// requests leaves the others unanswered: a fault naming them, and
    /// none is sent again.
    #[test]
    fn a_connection_closed_with_pipelined_requests_owed_is_a_fault() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let served = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf).unwrap();
            c.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")
                .unwrap();
            drop(c);
            // A second connection would be a request sent again.
            l.set_nonblocking(true).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            l.accept().is_err()
        });
        let mut c = conn(&url);
        c.queue(b"{}");
        c.queue(b"{}");
        assert_eq!(c.answer("a").unwrap().0, 200);
        let e = c.answer("b").unwrap_err();
        assert!(
            matches!(&e, TargetError::Unreachable(m) if m.contains("1 pipelined request(s) unanswered")),
            "{e}"
        );
        assert_eq!(c.owed(), 0, "given up");
        assert!(served.join().unwrap(), "no request sent again");
    }

    #[test]
    fn the_endpoint_keeps_the_urls_authority_and_path() {
        let e = Endpoint::of("http://localhost:8001").unwrap();
        assert_eq!(
            (e.authority.as_str(), e.path.as_str()),
            ("localhost:8001", "/")
        );
        let e = Endpoint::of("http://[::1]:9/base/").unwrap();
        assert_eq!(
            (e.authority.as_str(), e.host.as_str(), e.path.as_str()),
            ("[::1]:9", "::1", "/base/")
        );
        assert_eq!(Endpoint::of("http://127.0.0.1").unwrap().port, 80);
    }
}
