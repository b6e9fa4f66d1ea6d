use super::http::{answer, format_of, reply, MAX_HEAD};
use super::*;
use crate::metrics::feed::render::Format;
use std::io::{Read, Write};
use std::net::TcpStream;

fn text(_: Format) -> String {
    "fsbench_info 1\n".into()
}

#[test]
fn only_get_metrics_is_served() {
    let ok = reply("GET /metrics HTTP/1.1\r\nHost: x", text);
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body, "fsbench_info 1\n");
    assert_eq!(reply("GET /metrics?name[]=x HTTP/1.0", text).status, 200);
    for path in [
        "/",
        "/metrics/",
        "/metrics.txt",
        "/../etc/passwd",
        "//metrics",
        "*",
    ] {
        let r = reply(&format!("GET {path} HTTP/1.1"), text);
        assert_eq!(r.status, 404, "{path}");
        assert!(!r.body.contains("fsbench_info"), "{path}");
    }
    for method in ["POST", "HEAD", "PUT", "DELETE", "OPTIONS", "get"] {
        let r = reply(&format!("{method} /metrics HTTP/1.1"), text);
        assert_eq!(r.status, 405, "{method}");
    }
    for bad in [
        "",
        "GET",
        "GET /metrics",
        "GET /metrics HTTP/2",
        "GET  /metrics HTTP/1.1",
    ] {
        assert_eq!(reply(bad, text).status, 400, "{bad:?}");
    }
}

#[test]
fn openmetrics_when_the_client_asks_for_it() {
    // What Prometheus sends.
    let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    assert_eq!(format_of(Some(prom)), Format::OpenMetrics);
    assert_eq!(format_of(Some("*/*")), Format::Prometheus);
    assert_eq!(format_of(None), Format::Prometheus);
    assert_eq!(
        format_of(Some("text/plain, application/openmetrics-text;q=0.5")),
        Format::Prometheus
    );
    assert_eq!(
        format_of(Some("application/openmetrics-text;q=0")),
        Format::Prometheus
    );
    let r = reply(&format!("GET /metrics HTTP/1.1\r\nACCEPT: {prom}"), |f| {
        format!("{f:?}")
    });
    assert_eq!(r.body, "OpenMetrics");
    assert!(r
        .content_type
        .starts_with("application/openmetrics-text; version=1.0.0"));
}

/// One exchange through a real socket with a feed of its own; the raw response.
fn exchange(request: &[u8]) -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let feed = Feed::new(Info {
        host: "h".into(),
        ..Default::default()
    });
    let request = request.to_vec();
    let client = std::thread::spawn(move || {
        let mut c = TcpStream::connect(addr).unwrap();
        let _ = c.write_all(&request);
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        out
    });
    let (s, _) = l.accept().unwrap();
    answer(s, &feed);
    client.join().unwrap()
}

#[test]
fn a_scrape_gets_the_feed_and_the_connection_closes() {
    let out = exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
    assert!(
        out.contains("Content-Type: text/plain; version=0.0.4"),
        "{out}"
    );
    assert!(out.contains("fsbench_info{"), "{out}");
    let body = out.split("\r\n\r\n").nth(1).unwrap();
    let len: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(body.len(), len);
    let out = exchange(b"POST /metrics HTTP/1.1\r\n\r\n");
    assert!(
        out.starts_with("HTTP/1.1 405 ") && out.contains("Allow: GET\r\n"),
        "{out}"
    );
}

#[test]
fn requests_are_bounded_in_size_and_time() {
    let mut big = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
    big.extend(std::iter::repeat_n(b'a', MAX_HEAD + 10));
    let out = exchange(&big);
    assert!(out.starts_with("HTTP/1.1 431 "), "{out}");
    // A client that says nothing more is answered 408 once the deadline has passed.
    let t0 = Instant::now();
    let out = exchange(b"GET /metrics HTTP/1.1\r\n");
    assert!(out.starts_with("HTTP/1.1 408 "), "{out}");
    assert!(t0.elapsed() < http::DEADLINE + Duration::from_secs(2));
}

#[test]
fn a_taken_port_is_refused_and_a_closed_endpoint_frees_its_port() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = held.local_addr().unwrap();
    match Endpoint::open(addr, Info::default()) {
        Err(e @ OpenError::InUse(..)) => assert!(e.to_string().contains("taken"), "{e}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("bound a taken port"),
    }
    drop(held);
    let e = Endpoint::open(addr, Info::default()).unwrap();
    assert_eq!(e.addr, addr);
    drop(e);
    // Nothing listens there any more: the port binds again.
    std::net::TcpListener::bind(addr).unwrap();
}
