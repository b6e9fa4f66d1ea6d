//! The file tests: sequential create / stat (and read) / delete in name order, then random
//! create / stat / delete in a shuffled order, each ending as bonnie++ does (a sync after create
//! and delete, inside the timed part). Files are named relative to their open folder, as
//! bonnie++ works after changing into its directory.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::sys::dirfd::Dir;
use std::time::Instant;

use crate::io::calls::Lat;
use crate::io::DataGen;
use crate::stop::StopReason;

const ALNUM: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// A file: its folder (an index into the open folders) and its name.
pub type Entry = (usize, String);

/// The files of one sequential or random round, in creation order.
pub struct Names {
    pub paths: Vec<Entry>,
}

fn random_chars(rng: &mut DataGen) -> String {
    let n = (rng.next_u64() % 13) as usize;
    (0..n)
        .map(|_| ALNUM[(rng.next_u64() % ALNUM.len() as u64) as usize] as char)
        .collect()
}

/// The folder of file `i` of `n` (files spread evenly over `dirs` folders, or the root).
fn dir_of(i: u64, n: u64, dirs: u64) -> usize {
    if dirs == 0 {
        0
    } else {
        (i * dirs / n.max(1)) as usize
    }
}

/// The folders' paths: the root, or its `dirs` subfolders.
pub fn folders(root: &Path, dirs: u64) -> Vec<PathBuf> {
    if dirs == 0 {
        vec![root.to_path_buf()]
    } else {
        (0..dirs).map(|d| root.join(format!("{d:05}"))).collect()
    }
}

/// Names as bonnie++ makes them: the index in hex then random characters (sequential), or
/// random characters then the index (random, created in a shuffled order).
pub fn names(n: u64, dirs: u64, random: bool, rng: &mut DataGen) -> Names {
    let mut paths: Vec<Entry> = (0..n)
        .map(|i| {
            let r = random_chars(rng);
            let name = if random {
                format!("{r}{i:07x}")
            } else {
                format!("{i:07x}{r}")
            };
            (dir_of(i, n, dirs), name)
        })
        .collect();
    if random {
        shuffle(&mut paths, rng);
    }
    Names { paths }
}

pub fn shuffle<T>(v: &mut [T], rng: &mut DataGen) {
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

pub fn make_dirs(root: &Path, dirs: u64) -> io::Result<()> {
    std::fs::create_dir_all(root)?;
    for d in 0..dirs {
        std::fs::create_dir_all(root.join(format!("{d:05}")))?;
    }
    Ok(())
}

/// What a file test did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Done {
    pub files: u64,
    pub bytes: u64,
    pub stopped: Option<StopReason>,
}

fn sync_dir(root: &Path) -> io::Result<()> {
    crate::sys::syncfs(&File::open(root)?)
}

fn at(e: &Entry, what: &str, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{what} {}: {err}", e.1))
}

pub struct Sizes {
    pub min: u64,
    pub max: u64,
    pub fsync: bool,
}

/// Times `op` on every item (returning the bytes it moved), checking for a stop request first.
fn each<T>(
    items: impl Iterator<Item = io::Result<T>>,
    lat: &mut Lat,
    mut op: impl FnMut(T) -> io::Result<u64>,
) -> io::Result<Done> {
    let mut d = Done::default();
    for item in items {
        let item = item?;
        if let Some(why) = crate::stop::requested() {
            d.stopped = Some(why);
            return Ok(d);
        }
        let t = Instant::now();
        d.bytes += op(item)?;
        lat.since(t);
        d.files += 1;
    }
    Ok(d)
}

/// Creates every file (writing min..max random bytes when max > 0), then syncs.
pub fn create(
    names: &Names,
    dirs: &[Dir],
    root: &Path,
    sizes: &Sizes,
    pool: &[u8],
    rng: &mut DataGen,
    lat: &mut Lat,
) -> io::Result<Done> {
    let d = each(names.paths.iter().map(Ok), lat, |p| {
        let mut f = dirs[p.0].create_new(&p.1).map_err(|e| at(p, "create", e))?;
        if sizes.max == 0 {
            return Ok(0);
        }
        let n = sizes.min + rng.next_u64() % (sizes.max - sizes.min + 1);
        let at = (rng.next_u64() % (pool.len() as u64 - n.min(pool.len() as u64) + 1)) as usize;
        f.write_all(&pool[at..at + n as usize])?;
        if sizes.fsync {
            f.sync_all()?;
        }
        Ok(n)
    })?;
    if d.stopped.is_none() {
        sync_dir(root)?;
    }
    Ok(d)
}

/// Every file in directory order, read as it goes (bonnie++'s sequential read and delete walk
/// readdir, acting on each entry as it comes).
pub fn walk(root: &Path, dirs: u64) -> impl Iterator<Item = io::Result<Entry>> {
    folders(root, dirs).into_iter().enumerate().flat_map(
        |(i, f)| -> Box<dyn Iterator<Item = io::Result<Entry>>> {
            match std::fs::read_dir(&f) {
                Err(e) => Box::new(std::iter::once(Err(e))),
                Ok(rd) => Box::new(
                    rd.map(move |e| e.map(|e| (i, e.file_name().to_string_lossy().into_owned()))),
                ),
            }
        },
    )
}

/// stat(2) every file, reading those with data.
pub fn stat(
    paths: impl Iterator<Item = io::Result<Entry>>,
    dirs: &[Dir],
    buf: &mut [u8],
    lat: &mut Lat,
) -> io::Result<Done> {
    each(paths, lat, |p| {
        let len = dirs[p.0].size_of(&p.1).map_err(|e| at(&p, "stat", e))?;
        let mut bytes = 0;
        if len > 0 {
            let mut f = dirs[p.0].open_read(&p.1).map_err(|e| at(&p, "open", e))?;
            loop {
                let n = f.read(buf)?;
                if n == 0 {
                    break;
                }
                bytes += n as u64;
            }
        }
        Ok(bytes)
    })
}

/// unlink(2) every file, then syncs.
pub fn delete(
    paths: impl Iterator<Item = io::Result<Entry>>,
    dirs: &[Dir],
    root: &Path,
    lat: &mut Lat,
) -> io::Result<Done> {
    let d = each(paths, lat, |p| {
        dirs[p.0].unlink(&p.1).map_err(|e| at(&p, "unlink", e))?;
        Ok(0)
    })?;
    if d.stopped.is_none() {
        sync_dir(root)?;
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_hex_then_random_or_random_then_hex_and_spread_over_dirs() {
        let mut rng = DataGen::new(1);
        let s = names(100, 4, false, &mut rng);
        assert!(s.paths[0].1.starts_with("0000000"), "{}", s.paths[0].1);
        assert_eq!((s.paths[0].0, s.paths[99].0), (0, 3));
        let r = names(100, 0, true, &mut rng);
        let mut idx: Vec<u64> = r
            .paths
            .iter()
            .map(|(_, n)| u64::from_str_radix(&n[n.len() - 7..], 16).unwrap())
            .collect();
        assert_ne!(
            idx,
            (0..100).collect::<Vec<_>>(),
            "created in a shuffled order"
        );
        idx.sort_unstable();
        assert_eq!(idx, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn create_stat_delete_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("b");
        make_dirs(&root, 2).unwrap();
        let dirs: Vec<Dir> = folders(&root, 2)
            .iter()
            .map(|f| Dir::open(f).unwrap())
            .collect();
        let mut rng = DataGen::new(2);
        let n = names(50, 2, false, &mut rng);
        let pool = vec![1u8; 1 << 16];
        let sizes = Sizes {
            min: 10,
            max: 100,
            fsync: false,
        };
        let mut lat = Lat::default();
        let c = create(&n, &dirs, &root, &sizes, &pool, &mut rng, &mut lat).unwrap();
        assert_eq!(c.files, 50);
        assert!((500..=5000).contains(&c.bytes));
        let list = walk(&root, 2).collect::<io::Result<Vec<Entry>>>().unwrap();
        assert_eq!(list.len(), 50);
        let mut buf = vec![0u8; 4096];
        let s = stat(list.iter().cloned().map(Ok), &dirs, &mut buf, &mut lat).unwrap();
        assert_eq!(
            (s.files, s.bytes),
            (50, c.bytes),
            "files with data are read"
        );
        let d = delete(walk(&root, 2), &dirs, &root, &mut lat).unwrap();
        assert_eq!(d.files, 50);
        assert!(walk(&root, 2)
            .collect::<io::Result<Vec<Entry>>>()
            .unwrap()
            .is_empty());
        let mut h = crate::metrics::hist::new();
        lat.into_hist(&mut h);
        assert_eq!(h.len(), 150);
    }
}
