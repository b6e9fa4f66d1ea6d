//! Where a file's data and a directory's blocks lie in the loop images under a filesystem: FIEMAP
//! on ext4, XFS and F2FS (physical = the device's byte offset); on btrfs FIEMAP gives btrfs's
//! logical address, which `btrfs-map-logical` maps to each mirror's device and offset; on ZFS,
//! `zdb` lists the file's data blocks (DVAs: vdev, offset, size; the device offset is 4 MiB more,
//! past the front labels). Directory blocks: `debugfs blocks` (ext4), `xfs_db bmap` (XFS).

use std::path::Path;

use super::AuditError;
use crate::provision::exec::{argv, Sys};
use crate::provision::offline::Backing;
use crate::provision::{DirBlocks, Locate};

type R<T> = Result<T, AuditError>;

fn err(what: String) -> AuditError {
    AuditError::Locate(what)
}

/// A byte range in member `member`'s image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub member: usize,
    pub offset: u64,
    pub len: u64,
}

/// Where each copy of a file's first data block lies (one copy for most layouts; two with btrfs
/// dup/raid1, ZFS copies=2 or a two-way mirror). The audit damages the first copy and counts the
/// others.
pub type Copies = Vec<Place>;

/// ZFS's front labels and boot area before the allocatable space of a vdev.
const ZFS_FRONT: u64 = 4 << 20;

// FIEMAP extent flags that mean the physical address is not the data's place on the device.
const NOT_PLAIN: u32 = 0x2 | 0x4 | 0x8 | 0x80 | 0x100 | 0x200;

/// The copies of `file`'s first data block in the images under a filesystem located by
/// `locate`. On ZFS, `zfs_files` is what `zfs_files` listed and `zfs_path` the file's path in its
/// dataset.
pub fn data(
    sys: &Sys,
    locate: Locate,
    file: &Path,
    backing: &Backing,
    zfs_files: Option<&ZfsFiles>,
    zfs_path: &str,
) -> R<Copies> {
    let meta = std::fs::metadata(file).map_err(AuditError::io(file.display()))?;
    if locate == Locate::Zdb {
        let blocks = zfs_files
            .and_then(|m| m.get(zfs_path))
            .ok_or_else(|| err(format!("zdb did not list {zfs_path}")))?;
        return zfs_copies(blocks, meta.len(), backing);
    }
    let f = std::fs::File::open(file).map_err(AuditError::io(file.display()))?;
    let extents = crate::sys::fiemap::extents(&f).map_err(AuditError::io("FIEMAP"))?;
    let x = extents
        .iter()
        .find(|x| x.flags & NOT_PLAIN == 0 && x.logical < meta.len())
        .ok_or_else(|| {
            err(format!(
                "FIEMAP gave no plain extent for {}",
                file.display()
            ))
        })?;
    let len = x.length.min(meta.len() - x.logical);
    let mirrors = match locate {
        Locate::FiemapLogical => btrfs_map(sys, x.physical, backing)?,
        _ => vec![(0, x.physical)],
    };
    Ok(mirrors
        .into_iter()
        .map(|(member, offset)| Place {
            member,
            offset,
            len,
        })
        .collect())
}

/// btrfs logical address -> (member, device offset) of each mirror.
fn btrfs_map(sys: &Sys, logical: u64, backing: &Backing) -> R<Vec<(usize, u64)>> {
    let dev = backing
        .devices
        .first()
        .ok_or_else(|| err("btrfs without a loop device".into()))?;
    let out = sys.query(&argv(&[
        "btrfs-map-logical",
        "-l",
        &logical.to_string(),
        "-b",
        "4096",
        &dev.to_string_lossy(),
    ]))?;
    let got = parse_btrfs_map(&out, backing);
    if got.is_empty() {
        return Err(err(format!(
            "btrfs-map-logical did not map logical {logical}: {out}"
        )));
    }
    Ok(got)
}

/// `mirror 1 logical 63963136 physical 105906176 device /dev/loop0` lines.
pub fn parse_btrfs_map(out: &str, backing: &Backing) -> Vec<(usize, u64)> {
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.len() >= 8 && w[0] == "mirror" && w[4] == "physical" && w[6] == "device" {
                Some((backing.member(w[7])?, w[5].parse().ok()?))
            } else {
                None
            }
        })
        .collect()
}

/// One level-0 block as zdb lists it: (file offset, [(vdev, offset)] per copy, physical size).
pub type ZfsBlock = (u64, Vec<(u64, u64)>, u64);

/// Every file of a ZFS pool's root dataset, by its path there (`/dir/file`), with its level-0
/// blocks.
pub type ZfsFiles = std::collections::BTreeMap<String, Vec<ZfsBlock>>;

/// One `zdb -ddddd POOL` over the whole pool (asking for one object fails on some zfs-fuse
/// builds past the first dnode block), read for the root dataset's files.
pub fn zfs_files(sys: &Sys, pool: &str) -> R<ZfsFiles> {
    let out = sys.query(&argv(&[
        "zdb",
        "-U",
        &crate::provision::zfs::cache_path(pool).to_string_lossy(),
        "-ddddd",
        pool,
    ]))?;
    Ok(parse_zdb_files(&out))
}

pub fn parse_zdb_files(out: &str) -> ZfsFiles {
    let mut files = ZfsFiles::new();
    let mut in_zpl = false;
    let mut path: Option<String> = None;
    let mut blocks = Vec::new();
    let mut flush = |path: &mut Option<String>, blocks: &mut Vec<_>| {
        if let Some(p) = path.take() {
            if !blocks.is_empty() {
                files.insert(p, std::mem::take(blocks));
            }
        }
        blocks.clear();
    };
    for line in out.lines() {
        let t = line.trim_start();
        if line.starts_with("Dataset ") {
            flush(&mut path, &mut blocks);
            in_zpl = line.contains("[ZPL]");
        } else if !in_zpl {
            continue;
        } else if t.starts_with("Object ") && t.contains("lvl") {
            flush(&mut path, &mut blocks);
        } else if let Some(p) = t.strip_prefix("path\t") {
            path = Some(p.trim().to_string());
        } else {
            blocks.extend(parse_zdb_l0(line));
        }
    }
    flush(&mut path, &mut blocks);
    files
}

fn zfs_copies(blocks: &[ZfsBlock], size: u64, backing: &Backing) -> R<Copies> {
    let (file_off, dvas, psize) = blocks
        .first()
        .ok_or_else(|| err("zdb listed no data block".into()))?;
    let len = (*psize).min(size.saturating_sub(*file_off)).max(1);
    let mut copies = Vec::new();
    for (vdev, off) in dvas {
        if *vdev != 0 {
            return Err(err(format!(
                "zdb names vdev {vdev}: only single-vdev pools are located"
            )));
        }
        // A single-device pool's vdev 0 is the device; a mirror's children hold each block at
        // the same offset, one copy per child.
        for member in 0..backing.devices.len().max(1) {
            copies.push(Place {
                member,
                offset: ZFS_FRONT + off,
                len,
            });
        }
    }
    Ok(copies)
}

/// zdb's indirect-block lines for level 0: `  20000  L0 0:54000:20000 [0:...] 20000L/20000P F=1 ...`
/// -> (file offset, [(vdev, offset)], physical size).
pub fn parse_zdb_l0(out: &str) -> Vec<ZfsBlock> {
    let hex = |s: &str| u64::from_str_radix(s, 16).ok();
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.len() < 4 || w[1] != "L0" {
                return None;
            }
            let file_off = hex(w[0])?;
            let mut dvas = Vec::new();
            let mut psize = None;
            for t in &w[2..] {
                let parts: Vec<&str> = t.split(':').collect();
                if parts.len() == 3 {
                    dvas.push((hex(parts[0])?, hex(parts[1])?));
                } else if let Some((_, p)) = t.split_once('/') {
                    psize = hex(p.trim_end_matches('P'));
                    break;
                }
            }
            (!dvas.is_empty()).then_some((file_off, dvas, psize?))
        })
        .collect()
}

/// A block of entries of directory `dir` (relative to the filesystem's root; inode `ino`) in the
/// image, read from the unmounted device: ext4 through debugfs, XFS through xfs_db; the other
/// filesystems (`fs` names it) are not located.
pub fn dir_block(
    sys: &Sys,
    how: Option<DirBlocks>,
    fs: &str,
    device: &str,
    dir: &Path,
    ino: u64,
) -> R<Place> {
    let q = |a: &[&str]| sys.query(&argv(a)).map_err(AuditError::from);
    match how {
        Some(DirBlocks::Debugfs) => {
            let bs = field(&q(&["dumpe2fs", "-h", device])?, "Block size:")?;
            let cmd = format!("blocks /{}", dir.display());
            let blocks = q(&["debugfs", "-R", &cmd, device])?;
            // A directory of more than one block is indexed: its first block is the index
            // root, whose checksum covers only the index; the second holds entries.
            let list: Vec<u64> = blocks
                .split_whitespace()
                .filter_map(|b| b.parse().ok())
                .collect();
            let first = *list
                .get(1)
                .or(list.first())
                .ok_or_else(|| err(format!("debugfs listed no block of /{}", dir.display())))?;
            Ok(Place {
                member: 0,
                offset: first * bs,
                len: bs,
            })
        }
        Some(DirBlocks::XfsDb) => {
            let sb = q(&["xfs_db", "-r", "-c", "sb 0", "-c", "p agblocks", "-c", "p blocksize", device])?;
            let agblocks = field(&sb, "agblocks =")?;
            let bs = field(&sb, "blocksize =")?;
            let bmap = q(&["xfs_db", "-r", "-c", &format!("inode {ino}"), "-c", "bmap", device])?;
            let (agno, agbno) = parse_xfs_bmap(&bmap).ok_or_else(|| {
                err(format!("xfs_db bmap listed no data block of inode {ino}: {bmap}"))
            })?;
            Ok(Place {
                member: 0,
                offset: (agno * agblocks + agbno) * bs,
                len: bs,
            })
        }
        None => Err(err(format!(
            "directory blocks are not located on {fs} yet (its directories live in b-tree leaves with checksums and copies of their own)"
        ))),
    }
}

fn field(text: &str, key: &str) -> R<u64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            err(format!(
                "no '{key}' in: {}",
                text.lines().next().unwrap_or("")
            ))
        })
}

/// `data offset 0 startblock 24 (0/24) count 1 flag 0` -> (agno, agbno) of the first data block.
pub fn parse_xfs_bmap(out: &str) -> Option<(u64, u64)> {
    let l = out
        .lines()
        .find(|l| l.trim_start().starts_with("data offset 0 "))?;
    let inner = l.split('(').nth(1)?.split(')').next()?;
    let (a, b) = inner.split_once('/')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zdb_level0_lines_give_offsets_and_copies() {
        let out = "Indirect blocks:\n               0 L1  0:134000:1000 4000L/400P F=8 B=7/7\n               0  L0 0:34000:20000 20000L/20000P F=1 B=7/7\n           20000  L0 0:54000:20000 0:1054000:20000 20000L/20000P F=1 B=7/7\n";
        let got = parse_zdb_l0(out);
        assert_eq!(
            got,
            vec![
                (0, vec![(0, 0x34000)], 0x20000),
                (0x20000, vec![(0, 0x54000), (0, 0x1054000)], 0x20000)
            ]
        );
    }

    #[test]
    fn zdb_dump_gives_each_zpl_file_its_blocks() {
        let out = "Dataset mos [META], ID 0\n    Object  lvl\n         5    1  16K  ZFS plain file\n\tpath\t/not-this\n               0 L0 0:1000:1000 1000L/1000P F=1\nDataset pool [ZPL], ID 16\n    Object  lvl   iblk\n         6    1    16K    64K  ZFS plain file\n\tpath\t/d/f1\nIndirect blocks:\n               0 L0 0:34000:10000 10000L/10000P F=1 B=7/7\n    Object  lvl   iblk\n         7    1    16K    512  ZFS directory\n\tpath\t/d\n";
        let got = parse_zdb_files(out);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got["/d/f1"], vec![(0, vec![(0, 0x34000)], 0x10000)]);
    }

    #[test]
    fn btrfs_mirrors_map_to_members() {
        let b = Backing {
            devices: vec!["/dev/loop0".into(), "/dev/loop5".into()],
            images: vec![],
        };
        let out = "mirror 1 logical 63963136 physical 105906176 device /dev/loop0\nmirror 2 logical 63963136 physical 173015040 device /dev/loop5\n";
        assert_eq!(
            parse_btrfs_map(out, &b),
            vec![(0, 105906176), (1, 173015040)]
        );
    }

    #[test]
    fn xfs_bmap_gives_the_first_data_block() {
        let out = "data offset 0 startblock 16777240 (1/24) count 1 flag 0\ndata offset 8388608 startblock 30 (0/30) count 1 flag 0\n";
        assert_eq!(parse_xfs_bmap(out), Some((1, 24)));
    }
}
