use super::feed::render::Format;
use super::http::{answer, format_of, reply, Here, MAX_HEAD};
use super::*;
use std::io::{Read, Write};
use std::net::TcpStream;

fn text(_: Format) -> String {
    "fsbench_info 1\n".into()
}

/// A loopback endpoint on port 9464 of a host named `node7`.
fn here() -> Here<'static> {
    Here {
        addr: "127.0.0.1:9464".parse().unwrap(),
        name: "node7",
    }
}

/// `reply` at `here()`, the request line given its Host.
fn ask(request: &str) -> super::http::Reply {
    reply(&format!("{request}\r\nHost: 127.0.0.1:9464"), &here(), text)
}

#[test]
fn only_get_metrics_is_served() {
    let ok = ask("GET /metrics HTTP/1.1");
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body, "fsbench_info 1\n");
    assert_eq!(
        reply("GET /metrics?name[]=x HTTP/1.0", &here(), text).status,
        200
    );
    for path in [
        "/",
        "/metrics/",
        "/metrics.txt",
        "/../etc/passwd",
        "//metrics",
        "*",
    ] {
        let r = ask(&format!("GET {path} HTTP/1.1"));
        assert_eq!(r.status, 404, "{path}");
        assert!(!r.body.contains("fsbench_info"), "{path}");
    }
    for method in ["POST", "HEAD", "PUT", "DELETE", "OPTIONS", "get"] {
        let r = ask(&format!("{method} /metrics HTTP/1.1"));
        assert_eq!(r.status, 405, "{method}");
    }
    for bad in [
        "",
        "GET",
        "GET /metrics",
        "GET /metrics HTTP/2",
        "GET  /metrics HTTP/1.1",
    ] {
        assert_eq!(reply(bad, &here(), text).status, 400, "{bad:?}");
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
    let r = reply(
        &format!("GET /metrics HTTP/1.1\r\nhost: localhost\r\nACCEPT: {prom}"),
        &here(),
        |f| format!("{f:?}"),
    );
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
    answer(s, &feed, "h");
    client.join().unwrap()
}

#[test]
fn only_a_host_that_names_the_address_reached_is_answered() {
    let h = here();
    for named in [
        "127.0.0.1:9464",
        "127.0.0.1",
        " 127.0.0.1:9464 ",
        "localhost:9464",
        "LOCALHOST",
        "localhost.",
        "node7:9464",
        "Node7",
    ] {
        assert!(h.named_by(named), "{named}");
    }
    for other in [
        "evil.example:9464",
        "127.0.0.1:9465",
        "127.0.0.1:",
        "127.0.0.2:9464",
        "127.0.0.1.evil.example",
        "[::1]:9464",
        "node7.evil.example",
        "",
        "localhost:9464:1",
    ] {
        assert!(!h.named_by(other), "{other}");
    }
    let v6 = Here {
        addr: "[::1]:80".parse().unwrap(),
        name: "",
    };
    assert!(v6.named_by("[::1]:80") && v6.named_by("[::1]") && v6.named_by("localhost"));
    assert!(!v6.named_by("::1") && !v6.named_by("[::1]x") && !v6.named_by("[::1"));
    // An IPv4 client of a socket bound to [::] arrives at an IPv4-mapped address.
    let mapped = Here {
        addr: "[::ffff:10.1.2.3]:9464".parse().unwrap(),
        name: "",
    };
    assert!(mapped.named_by("10.1.2.3:9464"));
    assert!(!mapped.named_by("localhost"), "not a loopback address");
    // A page's own name gets no figures, and the answer says what is answered; HTTP/1.1
    // without a Host is the same; two Hosts are a bad request.
    for head in [
        "GET /metrics HTTP/1.1\r\nHost: rebound.example:9464",
        "GET /metrics HTTP/1.1",
    ] {
        let r = reply(head, &h, text);
        assert_eq!(r.status, 421, "{head}");
        assert!(!r.body.contains("fsbench_info"), "{head}");
        assert!(r.body.contains("Host: 127.0.0.1:9464"), "{}", r.body);
    }
    let two = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example";
    assert_eq!(reply(two, &h, text).status, 400);
    // Through a socket: the name is the connection's own address.
    let out = exchange(b"GET /metrics HTTP/1.1\r\nHost: attacker.example\r\n\r\n");
    assert!(out.starts_with("HTTP/1.1 421 "), "{out}");
    assert!(!out.contains("fsbench_info"), "{out}");
}

#[test]
fn an_address_others_may_reach_is_warned_of() {
    for quiet in ["127.0.0.1:9464", "[::1]:9464", "127.0.0.5:1"] {
        assert_eq!(exposure(quiet.parse().unwrap()), None, "{quiet}");
    }
    for open in [
        "0.0.0.0:9464",
        "[::]:9464",
        "10.0.0.5:9464",
        "192.168.1.2:80",
    ] {
        let w = exposure(open.parse().unwrap()).expect(open);
        assert!(w.contains(open) && w.contains("127.0.0.1:"), "{w}");
    }
}

/// Whether the serving thread is answering a connection now.
fn answering(e: &Endpoint) -> bool {
    e.serving.line.talking().is_some()
}

#[test]
fn no_client_delays_a_pause() {
    // A client that sends half a request and waits, and one that sends a request and then
    // trickles bytes (the drain after the answer): pausing the server (a single-threaded phase
    // starting) cuts either at once. Without the cut the first holds the thread for the
    // request's 2 s deadline and the second for 1.6 s of draining.
    let trickle = |mut c: TcpStream, stop: Arc<AtomicBool>| {
        while !stop.load(Ordering::Acquire) && c.write_all(b"x").is_ok() {
            std::thread::sleep(Duration::from_millis(40));
        }
    };
    let clients: [(&[u8], bool); 2] = [
        (b"GET /metrics HTTP/1.1\r\n", false),
        (b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", true),
    ];
    for (request, trickles) in clients {
        let e = Endpoint::open("127.0.0.1:0".parse().unwrap(), Info::default()).unwrap();
        let mut c = TcpStream::connect(e.addr).unwrap();
        c.write_all(request).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let writer = trickles.then(|| {
            let (c, stop) = (c.try_clone().unwrap(), stop.clone());
            std::thread::spawn(move || trickle(c, stop))
        });
        let t0 = Instant::now();
        while !answering(&e) && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(answering(&e), "the server took the connection");
        std::thread::sleep(Duration::from_millis(300));
        assert!(answering(&e), "the client holds it");
        let t0 = Instant::now();
        feed::Server::pause(e.serving.as_ref());
        let took = t0.elapsed();
        stop.store(true, Ordering::Release);
        if let Some(w) = writer {
            w.join().unwrap();
        }
        assert!(
            took < Duration::from_millis(500),
            "pausing waited {took:?} for a client"
        );
        assert!(e.serving.thread.lock().unwrap().is_none());
        // The endpoint serves again after the phase.
        feed::Server::resume(e.serving.as_ref());
        drop(c);
    }
}

#[test]
fn a_scrape_gets_the_feed_and_the_connection_closes() {
    let out = exchange(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
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
