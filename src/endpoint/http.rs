//! One HTTP/1.x exchange: read a request head (at most `MAX_HEAD` bytes, within `DEADLINE`),
//! answer GET /metrics with the feed's text (OpenMetrics when the client asks for it, else
//! Prometheus's text format), 404 for any other path, 405 for any other method on it, 421 for
//! a Host that does not name the address the connection reached (`Here`), and close. Nothing
//! else is served: no files, no listing, no other paths.

use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::feed::render::{self, Format};
use super::feed::Feed;

/// The longest request head read.
pub(super) const MAX_HEAD: usize = 8192;
/// How long one exchange may take, reading and writing.
pub(super) const DEADLINE: Duration = Duration::from_secs(2);

/// What the server answers.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    }
}

fn plain(status: u16, body: &str) -> Reply {
    Reply {
        status,
        content_type: "text/plain; charset=utf-8",
        body: format!("{body}\n"),
    }
}

/// The media ranges of an Accept header and their weights.
fn weights(accept: &str) -> impl Iterator<Item = (String, f64)> + '_ {
    accept.split(',').map(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(1.0);
        (media, q)
    })
}

/// OpenMetrics when the client weighs it at least as high as plain text, else Prometheus's
/// text format (also with no Accept header).
pub(super) fn format_of(accept: Option<&str>) -> Format {
    let Some(accept) = accept else {
        return Format::Prometheus;
    };
    let (mut om, mut text) = (0.0f64, 0.0f64);
    for (media, q) in weights(accept) {
        match media.as_str() {
            "application/openmetrics-text" => om = om.max(q),
            "text/plain" | "text/*" | "*/*" => text = text.max(q),
            _ => {}
        }
    }
    if om > 0.0 && om >= text {
        Format::OpenMetrics
    } else {
        Format::Prometheus
    }
}

/// Where a connection arrived: the Host names a request may give are this address's IP (with
/// or without its port), `localhost` when it is a loopback one, and the host's own name. Any
/// other name is a page's own (a browser sends the name it resolved, so a name that was made
/// to resolve here, DNS rebinding, is refused).
pub(super) struct Here<'a> {
    pub addr: SocketAddr,
    pub name: &'a str,
}

impl Here<'_> {
    /// Whether a Host header's value names this place.
    pub fn named_by(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        let (name, port) = match host.strip_prefix('[') {
            Some(v6) => match v6.split_once(']') {
                Some((ip, "")) => (ip, None),
                Some((ip, rest)) => match rest.strip_prefix(':') {
                    Some(p) => (ip, Some(p)),
                    None => return false,
                },
                None => return false,
            },
            None => match host.split_once(':') {
                Some((name, p)) => (name, Some(p)),
                None => (host.as_str(), None),
            },
        };
        if port.is_some_and(|p| p.parse::<u16>().ok() != Some(self.addr.port())) {
            return false;
        }
        let ip = self.addr.ip().to_canonical();
        let name = name.strip_suffix('.').unwrap_or(name);
        match name.parse::<IpAddr>() {
            Ok(given) => given.to_canonical() == ip,
            Err(_) => {
                (name == "localhost" && ip.is_loopback())
                    || (!self.name.is_empty() && name.eq_ignore_ascii_case(self.name))
            }
        }
    }

    /// How a Host header names it.
    fn example(&self) -> String {
        SocketAddr::new(self.addr.ip().to_canonical(), self.addr.port()).to_string()
    }
}

/// The reply to a request head that reached `here`; `render` makes the text of a scrape.
pub(super) fn reply(head: &str, here: &Here, render: impl FnOnce(Format) -> String) -> Reply {
    let mut lines = head.lines();
    let request = lines.next().unwrap_or("");
    let mut words = request.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return plain(400, "a request line is METHOD PATH HTTP/1.1");
    };
    if !version.starts_with("HTTP/1.") {
        return plain(400, "HTTP/1.0 or HTTP/1.1 only");
    }
    let path = target.split('?').next().unwrap_or("");
    if path != "/metrics" {
        return plain(404, "only /metrics is served here");
    }
    if method != "GET" {
        return plain(405, "only GET is served here");
    }
    let fields: Vec<(&str, &str)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(name, value)| (name.trim(), value.trim()))
        .collect();
    let field = |want: &str| -> Vec<&str> {
        fields
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case(want))
            .map(|(_, value)| *value)
            .collect()
    };
    // HTTP/1.1 requires one Host (RFC 9112, 3.2); an HTTP/1.0 client may send none (a browser
    // always sends one).
    match field("host")[..] {
        [] if version == "HTTP/1.0" => {}
        [host] if here.named_by(host) => {}
        [] | [_] => {
            return plain(
                421,
                &format!(
                    "this endpoint answers a request whose Host names the address it reached, e.g. Host: {}",
                    here.example()
                ),
            )
        }
        _ => return plain(400, "one Host header"),
    }
    let f = format_of(field("accept").first().copied());
    Reply {
        status: 200,
        content_type: f.content_type(),
        body: render(f),
    }
}

/// Reads a request head, to its blank line; the status to answer with when it does not come.
fn read_head(s: &mut TcpStream, deadline: Instant) -> Result<String, u16> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return Err(408);
        }
        match s.read(&mut chunk) {
            Ok(0) => return Err(400),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(408),
        }
        let end = buf
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .or_else(|| buf.windows(2).position(|w| w == b"\n\n"));
        if let Some(end) = end.filter(|e| *e <= MAX_HEAD) {
            return String::from_utf8(buf[..end].to_vec()).map_err(|_| 400);
        }
        if buf.len() > MAX_HEAD {
            return Err(431);
        }
    }
}

/// One exchange on an accepted connection of a host named `name`, then the connection closes.
pub(super) fn answer(mut s: TcpStream, feed: &Feed, name: &str) {
    let deadline = Instant::now() + DEADLINE;
    let Ok(addr) = s.local_addr() else {
        return;
    };
    if s.set_nonblocking(false).is_err() {
        return;
    }
    let here = Here { addr, name };
    let r = match read_head(&mut s, deadline) {
        Ok(head) => reply(&head, &here, |f| {
            render::text(&feed.view(Instant::now()), f)
        }),
        Err(status) => plain(status, reason(status)),
    };
    let allow = if r.status == 405 {
        "Allow: GET\r\n"
    } else {
        ""
    };
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{allow}Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    let left = deadline.saturating_duration_since(Instant::now());
    if s.set_write_timeout(Some(left.max(Duration::from_millis(100))))
        .is_err()
    {
        return;
    }
    if s.write_all(head.as_bytes()).is_err() || s.write_all(r.body.as_bytes()).is_err() {
        return;
    }
    // Whatever the client still sends (a body nobody asked for) is read and dropped, briefly,
    // so that closing does not reset the connection before it has read the reply.
    let _ = s.shutdown(Shutdown::Write);
    let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
    let mut sink = [0u8; 4096];
    for _ in 0..16 {
        match s.read(&mut sink) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
    }
}
