//! The IO tests, over any file-like `Fd` (a counting wrapper in the tests checks the calls):
//! per-character output and input (one-byte write() and read() calls), block output (fresh data
//! each chunk), rewrite (read a chunk, dirty a byte, seek back, write), block input, and random
//! seeks (read a random chunk; about one in ten written back).

use std::io::{self, SeekFrom};
use std::time::Instant;

use crate::io::calls::{calls, stopped, sync_unless_stopped, Done, Fd, Lat};
use crate::io::{DataGen, WriteData};

/// Per-character output: `n` one-byte write() calls, then fsync.
pub fn putc<F: Fd>(f: &mut F, n: u64, lat: &mut Lat) -> io::Result<Done> {
    let d = calls(n, lat, |i| f.putc((i & 0x7f) as u8).map(|_| 1))?;
    sync_unless_stopped(f, d)
}

/// Per-character input: `n` one-byte read() calls.
pub fn getc<F: Fd>(f: &mut F, n: u64, lat: &mut Lat) -> io::Result<Done> {
    calls(n, lat, |_| Ok(u64::from(f.getc()?)))
}

/// Block output: `size` bytes in chunks of `buf.len()`, fresh data in every chunk, then fsync.
pub fn put_block<F: Fd>(
    f: &mut F,
    size: u64,
    buf: &mut [u8],
    data: &WriteData,
    rng: &mut DataGen,
    lat: &mut Lat,
) -> io::Result<Done> {
    let chunk = buf.len() as u64;
    let d = calls(size / chunk, lat, |_| {
        data.fill(buf, rng);
        f.write_all(buf)?;
        Ok(chunk)
    })?;
    sync_unless_stopped(f, d)
}

/// Rewrite: read each chunk, dirty one byte, seek back, write it; then fsync.
pub fn rewrite<F: Fd>(f: &mut F, size: u64, buf: &mut [u8], lat: &mut Lat) -> io::Result<Done> {
    let chunk = buf.len() as u64;
    f.seek(SeekFrom::Start(0))?;
    let d = calls(size / chunk, lat, |i| {
        f.read_exact(buf)?;
        buf[(i as usize * 31) % buf.len()] ^= 0x5a;
        f.seek(SeekFrom::Current(-(chunk as i64)))?;
        f.write_all(buf)?;
        Ok(chunk)
    })?;
    sync_unless_stopped(f, d)
}

/// Block input: every chunk of `size` bytes.
pub fn get_block<F: Fd>(f: &mut F, size: u64, buf: &mut [u8], lat: &mut Lat) -> io::Result<Done> {
    let chunk = buf.len() as u64;
    calls(size / chunk, lat, |_| {
        f.read_exact(buf)?;
        Ok(chunk)
    })
}

/// The end of the tickets: one per seeker follows the last seek.
pub const END: u32 = u32::MAX;

/// One seeker, as bonnie++'s: it takes each seek's ticket (a random number) from a queue shared
/// with the other seekers, reads the chunk the ticket names, and writes about one in ten back
/// with a byte dirtied. It ends at the END ticket.
pub fn seeks<F: Fd>(
    f: &mut F,
    tickets: &mut dyn FnMut() -> io::Result<u32>,
    chunks: u64,
    buf: &mut [u8],
    rng: &mut DataGen,
    lat: &mut Lat,
) -> io::Result<Done> {
    let chunk = buf.len() as u64;
    let mut d = Done::default();
    loop {
        if let Some(why) = stopped(d.ops) {
            d.stopped = Some(why);
            return Ok(d);
        }
        let t0 = Instant::now();
        let ticket = tickets()?;
        if ticket == END {
            return Ok(d);
        }
        d.started.get_or_insert(t0);
        let at = (ticket as u64 % chunks.max(1)) * chunk;
        f.seek(SeekFrom::Start(at))?;
        f.read_exact(buf)?;
        d.bytes += chunk;
        let r = rng.next_u64();
        if r % 10 == 0 {
            buf[(r >> 20) as usize % buf.len()] ^= 0x5a;
            f.seek(SeekFrom::Start(at))?;
            f.write_all(buf)?;
            d.rewrites += 1;
        }
        lat.since(t0);
        d.ops += 1;
    }
}

/// A seeker's end, in bonnie++ 2.00a's order (seen with strace): fsync, close, stop the clock
/// (`clock`), then unlink the IO file (the seeks are the last IO test: the first seeker there
/// removes it, the others find it gone). A seeker that closes after another's unlink drops the
/// file's last reference, and its close frees the file (0.3 s for 2 GiB on tmpfs here) inside
/// the clock; bonnie++'s seeks/s counts that free whenever its seekers end that way.
pub fn seeker_end<F: Fd>(
    mut f: F,
    clock: impl FnOnce(),
    unlink: impl FnOnce() -> io::Result<()>,
) -> io::Result<()> {
    f.sync()?;
    drop(f);
    clock();
    match unlink() {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::calls::testing::Counting;
    use std::io::{Cursor, Read, Write};

    fn hist() -> Lat {
        Lat::default()
    }

    #[test]
    fn each_test_makes_bonnies_calls() {
        let mut f = Counting::default();
        let d = putc(&mut f, 3000, &mut hist()).unwrap();
        assert_eq!((d.ops, d.bytes), (3000, 3000));
        assert!(f.writes.iter().all(|&n| n == 1) && f.writes.len() == 3000);
        assert_eq!(f.syncs, 1, "putc ends with fsync");

        let mut f = Counting::default();
        let mut buf = vec![0u8; 8192];
        let data = WriteData::new(1, 8192, 0);
        let d = put_block(
            &mut f,
            80 * 8192,
            &mut buf,
            &data,
            &mut DataGen::new(1),
            &mut hist(),
        )
        .unwrap();
        assert_eq!(d.ops, 80);
        assert_eq!(f.writes, vec![8192; 80]);
        assert_eq!(f.syncs, 1);
        let written = f.data.get_ref().clone();
        // Fresh data in every chunk: no two chunks alike.
        let uniq: std::collections::HashSet<&[u8]> = written.chunks(8192).collect();
        assert_eq!(uniq.len(), 80);

        let mut f2 = Counting {
            data: Cursor::new(written.clone()),
            ..Default::default()
        };
        let d = rewrite(&mut f2, 80 * 8192, &mut buf, &mut hist()).unwrap();
        assert_eq!(d.ops, 80);
        assert_eq!((f2.reads.len(), f2.writes.len()), (80, 80));
        assert_eq!(
            f2.seeks, 81,
            "one seek to the start, then one back per chunk"
        );
        assert_ne!(f2.data.get_ref(), &written, "every chunk dirtied");

        let mut f3 = Counting {
            data: Cursor::new(written.clone()),
            ..Default::default()
        };
        getc(&mut f3, 5000, &mut hist()).unwrap();
        assert!(f3.reads.iter().all(|&n| n == 1) && f3.reads.len() == 5000);
        let mut f4 = Counting {
            data: Cursor::new(written),
            ..Default::default()
        };
        let d = get_block(&mut f4, 80 * 8192, &mut buf, &mut hist()).unwrap();
        assert_eq!((d.ops, d.bytes), (80, 80 * 8192));
        assert!(f4.writes.is_empty());
    }

    #[test]
    fn about_one_seek_in_ten_writes_back() {
        let mut f = Counting {
            data: Cursor::new(vec![7u8; 64 * 4096]),
            ..Default::default()
        };
        let mut buf = vec![0u8; 4096];
        let mut g = DataGen::new(9);
        let mut left = 8192i64;
        // 8192 tickets, then the end (as the feeder writes one end per seeker).
        let mut tickets = || {
            left -= 1;
            Ok(if left < 0 {
                END
            } else {
                g.next_u64() as u32 % END
            })
        };
        let d = seeks(
            &mut f,
            &mut tickets,
            64,
            &mut buf,
            &mut DataGen::new(3),
            &mut hist(),
        )
        .unwrap();
        assert_eq!(d.ops, 8192);
        assert_eq!(f.reads.len(), 8192, "one read per seek");
        let share = d.rewrites as f64 / d.ops as f64;
        assert!((0.08..0.12).contains(&share), "rewrite share {share}");
        assert_eq!(f.writes.len() as u64, d.rewrites);
        assert_eq!(f.seeks, 8192 + d.rewrites);
    }

    /// A file that logs its fsync and its close (drop), for the order of a seeker's end.
    struct Logged<'a>(&'a std::cell::RefCell<Vec<&'static str>>, Counting);

    impl Read for Logged<'_> {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.1.read(b)
        }
    }
    impl Write for Logged<'_> {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.1.write(b)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    impl io::Seek for Logged<'_> {
        fn seek(&mut self, at: SeekFrom) -> io::Result<u64> {
            self.1.seek(at)
        }
    }
    impl Fd for Logged<'_> {
        fn sync(&mut self) -> io::Result<()> {
            self.0.borrow_mut().push("fsync");
            Ok(())
        }
    }
    impl Drop for Logged<'_> {
        fn drop(&mut self) {
            self.0.borrow_mut().push("close");
        }
    }

    #[test]
    fn a_seeker_ends_as_bonnies_fsync_close_clock_unlink() {
        let log = std::cell::RefCell::new(Vec::new());
        let f = Logged(&log, Counting::default());
        let clock = || log.borrow_mut().push("clock");
        let unlink = || {
            log.borrow_mut().push("unlink");
            Ok(())
        };
        seeker_end(f, clock, unlink).unwrap();
        assert_eq!(*log.borrow(), ["fsync", "close", "clock", "unlink"]);
        // A seeker that finds the file already gone (another seeker removed it) ends well.
        let gone = || Err(io::Error::from(io::ErrorKind::NotFound));
        assert!(seeker_end(Counting::default(), || {}, gone).is_ok());
        let denied = || Err(io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(seeker_end(Counting::default(), || {}, denied).is_err());
    }
}
