//! The room a filesystem leaves for data on a fresh loop image of fsbench's making: what statvfs
//! says is available right after mkfs and mount (and, where mkfs fixes their number, the free
//! inodes), at a few sizes per filesystem with its defaults, interpolated between them. Each
//! table says how its figures were had and where: measured (scripts/measure-room, on the host,
//! kernel and tools it names; the privileged test privileged_room measures each again), derived
//! from the mkfs tool's own figures where no kernel here mounts the filesystem, or not measured
//! on any host fsbench was measured on, from the filesystem's rules, on the small side. A
//! provisioned target's own figure is kept in the work directory, by filesystem, options and
//! size, and preferred the next time: options change the overhead (ext4's inodes=, XFS's log),
//! and a measured figure beats one from the table.

use std::path::Path;

/// (image size, bytes available) measured on fresh images, smallest first; for inodes, (image
/// size, free inodes).
pub type Points = &'static [(u64, u64)];

const G: u64 = 1 << 30;
const M: u64 = 1 << 20;

/// Where a table was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Host {
    pub host: &'static str,
    pub kernel: &'static str,
    pub tools: &'static str,
    pub on: &'static str,
}

/// How a table's figures were had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    /// statvfs on fresh images fsbench provisioned (scripts/measure-room).
    Measured(Host),
    /// The mkfs tool's own figures, read from the image it made (no kernel there mounts it):
    /// what from.
    Derived(Host, &'static str),
    /// Not measured on any host fsbench was measured on: the rule the figures follow.
    Rule(&'static str),
}

/// Inodes on a fresh image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inodes {
    /// Made as files need them: no count to run out of but the room.
    AsNeeded,
    /// Fixed by mkfs: the free inodes at each size, and the target option that sets their
    /// number instead (ext4's inodes=).
    Fixed { free: Points, option: &'static str },
}

/// One filesystem's room on fresh images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    pub points: Points,
    pub inodes: Inodes,
    pub made: Made,
}

impl Table {
    /// How the judgement names the table's figures.
    pub fn whence(&self) -> &'static str {
        match self.made {
            Made::Measured(_) => "measured at its defaults",
            Made::Derived(..) => "derived from its mkfs's own figures",
            Made::Rule(_) => "not measured on this host: its rules, on the small side",
        }
    }

    /// Free inodes on a fresh image of `size` with `t`'s options (None: made as needed). With
    /// the option that sets their number, that number less the 11 the filesystem keeps.
    pub fn free_inodes(&self, t: &crate::plan::TargetSpec, size: u64) -> Option<u64> {
        let Inodes::Fixed { free, option } = self.inodes else {
            return None;
        };
        match t.option(option).and_then(|o| o.value.as_deref()) {
            Some(n) => crate::plan::units::parse_size(n)
                .ok()
                .map(|n| n.saturating_sub(11)),
            None => interpolate(free, size),
        }
    }
}

/// This host, where the measured tables were measured (scripts/measure-room's first lines).
const VM: Host = Host {
    host: "vm (2-core Debian 12 VM)",
    kernel: "6.18.44-fc-v857",
    tools:
        "e2fsprogs 1.47.0, xfsprogs 6.1.0, btrfs-progs 6.2, f2fs-tools 1.15.0, zfs-fuse 0.7.0-25+b1",
    on: "2026-11-28",
};

pub const EXT4: Table = Table {
    points: &[
        (512 * M, 473_272_320),
        (G, 950_214_656),
        (2 * G, 1_916_198_912),
        (4 * G, 3_912_130_560),
        (16 * G, 15_854_100_480),
        (64 * G, 63_596_892_160),
    ],
    inodes: Inodes::Fixed {
        free: &[
            (512 * M, 32_757),
            (G, 65_525),
            (2 * G, 131_061),
            (4 * G, 262_133),
            (16 * G, 1_048_565),
            (64 * G, 4_194_293),
        ],
        option: "inodes",
    },
    made: Made::Measured(VM),
};
pub const XFS: Table = Table {
    points: &[
        (512 * M, 439_373_824),
        (G, 965_767_168),
        (2 * G, 2_032_025_600),
        (4 * G, 4_164_526_080),
        (16 * G, 16_959_598_592),
        (64 * G, 68_139_859_968),
    ],
    inodes: Inodes::AsNeeded,
    made: Made::Measured(VM),
};
pub const BTRFS: Table = Table {
    points: &[
        (512 * M, 451_936_256),
        (G, 948_568_064),
        (2 * G, 1_914_961_920),
        (4 * G, 3_740_270_592),
        (16 * G, 16_625_172_480),
        (64 * G, 66_554_167_296),
    ],
    inodes: Inodes::AsNeeded,
    made: Made::Measured(VM),
};
/// ZFS served by zfs-fuse (a pool of its own rules: far more room than kernel ZFS leaves on a
/// small image).
pub const ZFS_FUSE: Table = Table {
    points: &[
        (512 * M, 494_555_136),
        (G, 1_031_426_048),
        (2 * G, 2_096_779_264),
        (4 * G, 4_194_455_552),
        (16 * G, 16_778_940_416),
        (64 * G, 67_116_879_872),
    ],
    inodes: Inodes::AsNeeded,
    made: Made::Measured(VM),
};
/// Kernel ZFS (OpenZFS 2.x), which this host has not: what a single-vdev pool of an image leaves
/// by OpenZFS's rules (labels and boot region 4.5 MiB; 16 metaslabs a vdev under 8 GiB, one per
/// 512 MiB above, what does not fill one unused; a slop of 1/32 of the pool, at least 128 MiB,
/// at most half of it), then 2% less for the pool's and dataset's own metadata.
pub const ZFS_KERNEL: Table = Table {
    points: &[
        (512 * M, 361_716_776),
        (G, 854_966_927),
        (2 * G, 1_841_467_228),
        (4 * G, 3_814_467_829),
        (16 * G, 15_800_446_484),
        (64 * G, 64_747_303_075),
    ],
    inodes: Inodes::AsNeeded,
    made: Made::Rule(
        "OpenZFS 2.x: labels 4.5 MiB, metaslab rounding, slop max(1/32, min(128 MiB, 1/2)), 2% less",
    ),
};
/// F2FS, which this kernel cannot mount: mkfs.f2fs's checkpoint (user_block_count less
/// valid_block_count, in 4 KiB blocks: what f2fs's statfs gives as available), read by dump.f2fs.
pub const F2FS: Table = Table {
    points: &[
        (512 * M, 415_227_904),
        (G, 910_155_776),
        (2 * G, 1_923_080_192),
        (4 * G, 3_978_289_152),
        (16 * G, 16_515_063_808),
        (64 * G, 67_245_170_688),
    ],
    inodes: Inodes::AsNeeded,
    made: Made::Derived(
        VM,
        "mkfs.f2fs's checkpoint, user_block_count - valid_block_count (dump.f2fs)",
    ),
};

/// Where a figure of room came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Measured on a target of the same filesystem, options and size (the work directory's
    /// record).
    Measured,
    /// The filesystem's table at its defaults, interpolated (how it was had: `Table::whence`).
    Table(&'static Table),
    /// The whole size (tmpfs: its size= is the room).
    Whole,
}

/// The room of an image of `size` from measured points: between two points, the overhead's
/// share interpolated on the log of the size; beyond the ends, the nearest point's share.
pub fn interpolate(points: Points, size: u64) -> Option<u64> {
    let share = |(s, a): (u64, u64)| a as f64 / s as f64;
    let (first, last) = (*points.first()?, *points.last()?);
    let r = if size <= first.0 {
        share(first)
    } else if size >= last.0 {
        share(last)
    } else {
        let i = points.iter().position(|p| p.0 >= size)?;
        let (a, b) = (points[i - 1], points[i]);
        let t = ((size as f64).ln() - (a.0 as f64).ln()) / ((b.0 as f64).ln() - (a.0 as f64).ln());
        share(a) + t * (share(b) - share(a))
    };
    Some((r * size as f64) as u64)
}

/// The key a target's measured room is kept under: filesystem, its options as written, size.
pub fn key(t: &crate::plan::TargetSpec, size: u64) -> String {
    let mut opts: Vec<String> = t
        .options
        .iter()
        .map(|o| match &o.value {
            Some(v) => format!("{}={v}", o.key),
            None => o.key.clone(),
        })
        .filter(|o| !o.starts_with("label="))
        .collect();
    opts.sort();
    format!("{}:{}@{size}", t.fs, opts.join(","))
}

/// The work directory's record of measured room.
const RECORD: &str = ".fsbench-room.json";

fn read_record(workdir: &Path) -> serde_json::Map<String, serde_json::Value> {
    let Ok(dir) = crate::sys::dirfd::Dir::open_nofollow(workdir) else {
        return Default::default();
    };
    let Ok(mut f) = dir.open_read_nofollow(RECORD) else {
        return Default::default();
    };
    let mut text = String::new();
    let _ = std::io::Read::read_to_string(&mut f, &mut text);
    serde_json::from_str(&text).unwrap_or_default()
}

/// The room measured before on a target like `t` of `size`, if the work directory keeps one.
pub fn measured(workdir: &Path, t: &crate::plan::TargetSpec, size: u64) -> Option<u64> {
    read_record(workdir).get(&key(t, size))?.as_u64()
}

/// Keeps the room a target just provisioned has (its statvfs before anything was written).
/// Best effort: a record that cannot be written is not an error of the run.
pub fn remember(workdir: &Path, t: &crate::plan::TargetSpec, size: u64, avail: u64) {
    let mut m = read_record(workdir);
    m.insert(key(t, size), serde_json::Value::from(avail));
    if let Ok(dir) = crate::sys::dirfd::Dir::open_nofollow(workdir) {
        let text = serde_json::to_string_pretty(&m).unwrap_or_default();
        let _ = dir.write_atomic(RECORD, text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_points_come_back_and_sizes_between_them_lie_between() {
        assert_eq!(interpolate(BTRFS.points, 2 * G), Some(1_914_961_920));
        let three = interpolate(BTRFS.points, 3 * G).unwrap();
        assert!(three > 2_700_000_000 && three < 2_900_000_000, "{three}");
        // Beyond the ends: the nearest point's share.
        let big = interpolate(XFS.points, 256 * G).unwrap();
        assert!((big as f64 / (256 * G) as f64 - 68_139_859_968.0 / (64 * G) as f64).abs() < 1e-6);
        assert_eq!(interpolate(&[], G), None);
    }

    #[test]
    fn a_measured_room_is_kept_by_filesystem_options_and_size() {
        let d = tempfile::tempdir().unwrap();
        let t = crate::provision::parse_target("ext4:inodes=2000000").unwrap();
        assert_eq!(measured(d.path(), &t, 2 * G), None);
        remember(d.path(), &t, 2 * G, 1_800_000_000);
        assert_eq!(measured(d.path(), &t, 2 * G), Some(1_800_000_000));
        let plain = crate::provision::parse_target("ext4").unwrap();
        assert_eq!(measured(d.path(), &plain, 2 * G), None);
        assert_eq!(measured(d.path(), &t, 4 * G), None);
    }
}
