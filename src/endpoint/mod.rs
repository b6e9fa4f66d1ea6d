//! The live metrics endpoint (`--metrics ADDR`): a small HTTP server of its own on std::net,
//! one thread, serving the live feed (`feed/`, the run's observer: `frame::observe`) at GET
//! /metrics and nothing else. It binds the address given and no other, before anything is
//! provisioned (a taken port is an exit 2 with nothing made); it closes when the run ends
//! (`Endpoint` dropped: the port is free again).
//! The thread wakes every `POLL`: it passes the feed's interval boundaries (`Feed::tick`) and
//! answers at most one connection per wake, each bounded in size and time (`http.rs`), so a
//! client that scrapes in a loop cannot take more than a sliver of a CPU from the benchmark.
//! While a phase runs that must have no other thread alive (`PhaseSpec::single_thread`), the
//! thread ends and the socket stays bound: a scrape then waits until the phase is over. Ending
//! it waits for no client: the connection being answered is cut (shut down both ways) and the
//! thread woken from its wait, so a client that sends or reads slowly cannot delay a phase.
//! Only a request whose Host names the address it reached (`http::Here`) is answered: a page in
//! a browser cannot read the endpoint through a name of its own (DNS rebinding).

pub mod feed;
mod http;

use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::frame::observe;
use feed::{Feed, Info};

/// How often the serving thread wakes.
const POLL: Duration = Duration::from_millis(50);

/// Why the endpoint could not open (the command exits 2, having made nothing).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("--metrics {0}: the port is taken (another process listens there): give another, e.g. --metrics {1}")]
    InUse(SocketAddr, SocketAddr),
    #[error("--metrics {0}: not an address of this host: give one of its own, e.g. 127.0.0.1:{1}")]
    NotHere(SocketAddr, u16),
    #[error(
        "--metrics {0}: not allowed to listen there ({1}): give a port above 1023, or run as root"
    )]
    Denied(SocketAddr, std::io::Error),
    #[error("--metrics {0}: cannot listen there: {1}")]
    Other(SocketAddr, std::io::Error),
}

/// The warning for an address other machines may reach (None for a loopback one): the
/// endpoint has no authentication, and it serves the host's name, the study's path and the
/// command line.
pub fn exposure(addr: SocketAddr) -> Option<String> {
    if addr.ip().is_loopback() {
        return None;
    }
    let reach = if addr.ip().is_unspecified() {
        "every address of this host"
    } else {
        "an address other machines may reach"
    };
    Some(format!(
        "--metrics {addr} is {reach}: whoever connects reads this host's name, the study's path and the command line (no authentication); give a loopback address unless that is meant, e.g. --metrics 127.0.0.1:{}",
        addr.port()
    ))
}

/// What the serving thread and whoever stops it share: the stop flag and the connection being
/// answered, which stopping cuts.
#[derive(Default)]
struct Line {
    stop: AtomicBool,
    talking: Mutex<Option<TcpStream>>,
}

impl Line {
    fn talking(&self) -> std::sync::MutexGuard<'_, Option<TcpStream>> {
        self.talking.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a connection to answer, kept where `cut` finds it; None once stopping (checked
    /// under the same lock `cut` takes, so no connection is taken after the cut).
    fn pick_up(&self, s: TcpStream) -> Option<TcpStream> {
        let mut talking = self.talking();
        if self.stop.load(Ordering::Acquire) {
            return None;
        }
        *talking = Some(s.try_clone().ok()?);
        Some(s)
    }

    fn hang_up(&self) {
        self.talking().take();
    }

    /// Stops the thread: the flag, and the connection it answers shut down both ways (its
    /// reads and writes return at once).
    fn cut(&self) {
        self.stop.store(true, Ordering::Release);
        if let Some(s) = self.talking().as_ref() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// The serving thread and what it serves; the listener comes back from the thread when it
/// pauses.
struct Serving {
    feed: Arc<Feed>,
    /// This host's name, which a Host header may give.
    host: String,
    line: Arc<Line>,
    listener: Mutex<Option<TcpListener>>,
    thread: Mutex<Option<JoinHandle<TcpListener>>>,
}

/// An open endpoint; dropping it closes it.
pub struct Endpoint {
    serving: Arc<Serving>,
    /// The address it listens on (the port the system chose, for port 0).
    pub addr: SocketAddr,
}

fn serve(l: TcpListener, feed: Arc<Feed>, line: Arc<Line>, host: String) -> TcpListener {
    while !line.stop.load(Ordering::Acquire) {
        feed.tick(Instant::now());
        if let Ok((stream, _)) = l.accept() {
            if let Some(s) = line.pick_up(stream) {
                http::answer(s, &feed, &host);
                line.hang_up();
            }
        }
        // (Woken at once when stopped.)
        std::thread::park_timeout(POLL);
    }
    l
}

impl feed::Server for Serving {
    fn pause(&self) {
        self.line.cut();
        let handle = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = &handle {
            h.thread().unpark();
        }
        if let Some(l) = handle.and_then(|h| h.join().ok()) {
            *self.listener.lock().unwrap_or_else(|e| e.into_inner()) = Some(l);
        }
    }

    fn resume(&self) {
        let Some(l) = self
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        else {
            return;
        };
        self.line.stop.store(false, Ordering::Release);
        let (feed, line, host) = (self.feed.clone(), self.line.clone(), self.host.clone());
        let t = std::thread::Builder::new()
            .name("fsbench-metrics".into())
            .spawn(move || serve(l, feed, line, host));
        // (A thread that cannot start leaves the endpoint closed; the run goes on.)
        *self.thread.lock().unwrap_or_else(|e| e.into_inner()) = t.ok();
    }
}

impl Endpoint {
    /// Binds `addr` and starts serving the run described by `info`.
    pub fn open(addr: SocketAddr, info: Info) -> Result<Endpoint, OpenError> {
        let l = TcpListener::bind(addr).map_err(|e| match e.kind() {
            std::io::ErrorKind::AddrInUse => {
                let mut next = addr;
                next.set_port(addr.port().wrapping_add(1).max(1024));
                OpenError::InUse(addr, next)
            }
            std::io::ErrorKind::AddrNotAvailable => OpenError::NotHere(addr, addr.port()),
            std::io::ErrorKind::PermissionDenied => OpenError::Denied(addr, e),
            _ => OpenError::Other(addr, e),
        })?;
        let bound = l.local_addr().unwrap_or(addr);
        l.set_nonblocking(true)
            .map_err(|e| OpenError::Other(addr, e))?;
        let host = info.host.clone();
        let feed = Arc::new(Feed::new(info));
        let serving = Arc::new(Serving {
            feed: feed.clone(),
            host,
            line: Arc::default(),
            listener: Mutex::new(Some(l)),
            thread: Mutex::new(None),
        });
        let as_server: Arc<dyn feed::Server> = serving.clone();
        feed.served_by(Arc::downgrade(&as_server));
        feed::Server::resume(serving.as_ref());
        observe::install(feed);
        Ok(Endpoint {
            serving,
            addr: bound,
        })
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        observe::uninstall();
        feed::Server::pause(self.serving.as_ref());
        // The listening socket closes here: the port is free again.
        drop(
            self.serving
                .listener
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
    }
}

#[cfg(test)]
mod tests;
