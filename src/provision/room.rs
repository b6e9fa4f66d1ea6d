//! The room a filesystem leaves for data on a fresh loop image of fsbench's making: what statvfs
//! says is available right after mkfs and mount, measured (scripts/measure-room; the privileged
//! test privileged_room checks it again) at a few sizes per filesystem with its defaults, and
//! interpolated between them. A provisioned target's own figure is kept in the work directory,
//! by filesystem, options and size, and preferred the next time: options change the overhead
//! (ext4's inodes=, XFS's log), and a measured figure beats one from the table.

use std::path::Path;

/// (image size, bytes available) measured on fresh images, smallest first.
pub type Points = &'static [(u64, u64)];

const G: u64 = 1 << 30;
const M: u64 = 1 << 20;

pub const EXT4: Points = &[
    (512 * M, 473_272_320),
    (G, 950_214_656),
    (2 * G, 1_916_198_912),
    (4 * G, 3_912_130_560),
    (16 * G, 15_854_100_480),
    (64 * G, 63_596_892_160),
];
pub const XFS: Points = &[
    (512 * M, 439_373_824),
    (G, 965_767_168),
    (2 * G, 2_032_025_600),
    (4 * G, 4_164_526_080),
    (16 * G, 16_959_598_592),
    (64 * G, 68_139_859_968),
];
pub const BTRFS: Points = &[
    (512 * M, 451_936_256),
    (G, 948_568_064),
    (2 * G, 1_914_961_920),
    (4 * G, 3_740_270_592),
    (16 * G, 16_625_172_480),
    (64 * G, 66_554_167_296),
];
pub const ZFS: Points = &[
    (512 * M, 494_555_136),
    (G, 1_031_426_048),
    (2 * G, 2_096_779_264),
    (4 * G, 4_194_455_552),
    (16 * G, 16_778_940_416),
    (64 * G, 67_116_879_872),
];

/// Where a figure of room came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Measured on a target of the same filesystem, options and size (the work directory's
    /// record).
    Measured,
    /// The filesystem's table at its defaults, interpolated.
    Table,
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
        assert_eq!(interpolate(BTRFS, 2 * G), Some(1_914_961_920));
        let three = interpolate(BTRFS, 3 * G).unwrap();
        assert!(three > 2_700_000_000 && three < 2_900_000_000, "{three}");
        // Beyond the ends: the nearest point's share.
        let big = interpolate(XFS, 256 * G).unwrap();
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
