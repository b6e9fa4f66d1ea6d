//! A GET of fsbench's live metrics endpoint (or of a Prometheus server's API) on 127.0.0.1, and
//! a free port to give either.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Child;
use std::time::{Duration, Instant};

/// A port nothing listens on now (the system's pick, let go).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One GET on 127.0.0.1:`port`; (status, body), or None when nothing answers.
pub fn get(port: u16, path: &str, accept: Option<&str>) -> Option<(u16, String)> {
    get_as(port, path, accept, "127.0.0.1")
}

/// One GET on 127.0.0.1:`port` that names `host` in its Host header.
pub fn get_as(port: u16, path: &str, accept: Option<&str>, host: &str) -> Option<(u16, String)> {
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{accept}\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let status = out.split(' ').nth(1)?.parse().ok()?;
    Some((status, out.split_once("\r\n\r\n")?.1.to_string()))
}

/// The sum of a metric's samples whose labels hold `with`.
pub fn sample_sum(text: &str, name: &str, with: &str) -> u64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) && l.contains(with))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// Waits until `port` serves a phase (its scrape has the running phase's elapsed time).
pub fn wait_for_phase(port: u16, child: &mut Child) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if let Some((200, body)) = get(port, "/metrics", None) {
            if body.contains("fsbench_phase_elapsed_seconds{") {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}
