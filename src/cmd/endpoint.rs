//! `--metrics ADDR` at the command edge: the endpoint opened in the command's preflight, before
//! anything is provisioned (a taken port is an exit 2 with nothing made), on ADDR's port + K on
//! rank K of a multi-rank run (each rank serves its own figures), and said on standard error,
//! with a warning when the address is not a loopback one (even with -q).

use std::net::SocketAddr;
use std::path::Path;

use crate::endpoint::feed::Info;
use crate::endpoint::Endpoint;
use crate::frame::Rank;
use crate::ranks::Team;

/// The address rank `rank` serves on: `addr`'s port + its index (port 0 stays 0: the system
/// picks one for each).
fn rank_addr(addr: SocketAddr, rank: Rank) -> anyhow::Result<SocketAddr> {
    if addr.port() == 0 || rank.index == 0 {
        return Ok(addr);
    }
    let port = u16::try_from(addr.port() as usize + rank.index).map_err(|_| {
        anyhow::anyhow!(
            "--metrics {addr}: rank {} would serve on port {} + {}, past 65535: give a lower port",
            rank.index,
            addr.port(),
            rank.index
        )
    })?;
    let mut a = addr;
    a.set_port(port);
    Ok(a)
}

/// Opens the endpoint `addr` asks for (none without it) for `command`'s run in `study`. (A rank
/// of several that cannot open its own ends every rank: `cmd::before_agreeing`.)
pub fn open(
    addr: Option<SocketAddr>,
    command: &str,
    study: &Path,
    team: &dyn Team,
    quiet: bool,
) -> anyhow::Result<Option<Endpoint>> {
    let Some(addr) = addr else {
        return Ok(None);
    };
    opened(addr, command, study, team.rank(), quiet).map(Some)
}

fn opened(
    addr: SocketAddr,
    command: &str,
    study: &Path,
    rank: Rank,
    quiet: bool,
) -> anyhow::Result<Endpoint> {
    let addr = rank_addr(addr, rank)?;
    let info = Info {
        build: crate::about::version().to_string(),
        command: command.to_string(),
        study: study.display().to_string(),
        host: crate::sys::host::hostname(),
        rank: rank.index,
    };
    let e = Endpoint::open(addr, info)?;
    if let Some(w) = crate::endpoint::exposure(addr) {
        crate::out::eline!("fsbench: warning: {w}");
    }
    if !quiet {
        let of = if rank.many() {
            format!(" (rank {})", rank.index)
        } else {
            String::new()
        };
        crate::out::eline!("fsbench: live metrics{of} at http://{}/metrics", e.addr);
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_k_serves_on_the_port_plus_k() {
        let a: SocketAddr = "127.0.0.1:9464".parse().unwrap();
        let r = |index| Rank { index, size: 4 };
        assert_eq!(rank_addr(a, r(0)).unwrap(), a);
        assert_eq!(rank_addr(a, r(3)).unwrap().port(), 9467);
        let zero: SocketAddr = "[::1]:0".parse().unwrap();
        assert_eq!(rank_addr(zero, r(2)).unwrap(), zero);
        let top: SocketAddr = "127.0.0.1:65535".parse().unwrap();
        assert!(rank_addr(top, r(1))
            .unwrap_err()
            .to_string()
            .contains("65535"));
    }
}
