//! Space judged before the run, per target: what the plan's workloads leave on it (their files,
//! and on a copy-on-write filesystem the bytes a phase rewrites in place, written anew before
//! the old copy is freed, and kept while a snapshot pins it; the inodes of their files where
//! mkfs fixes the number) against the room the target will have (`provision::room`: measured,
//! derived or by rule, as the table says; on several images as their layout leaves: all of a
//! stripe, half of a raid1, one of a mirror, all but one of a raidz). A plan that cannot fit is
//! refused before anything is provisioned, naming the target, the need, the room and the fix.

use std::path::Path;

use crate::plan::units::{format_bytes, format_count};
use crate::plan::TargetSpec;
use crate::provision::room::{self, Source};
use crate::workload::{Footprint, SpecError};

/// A plan fits a target when its need, plus this share for the filesystem's metadata and
/// allocation, is within the room.
pub const MARGIN: f64 = 0.05;

/// The inodes a plan's files take and those a fresh target has free, where mkfs fixes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InodeNeed {
    pub need: u64,
    pub free: u64,
    /// The target option that sets their number (ext4's inodes=), and whether the target
    /// sets it (then a larger image does not give more).
    pub option: &'static str,
    pub set: bool,
}

impl InodeNeed {
    pub fn fits(&self) -> bool {
        self.need <= self.free
    }
}

/// The images a target spans and the share of them that holds data (`provision::layout`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    pub images: usize,
    pub data: f64,
}

/// One target's judgement.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub label: String,
    pub fs: String,
    /// Each image's size (None: an existing directory's room as it is now).
    pub size: Option<u64>,
    pub layout: Layout,
    /// Bytes of files the workloads keep on it.
    pub files: u64,
    /// Bytes a copy-on-write filesystem needs besides for rewrites (0 when it rewrites in
    /// place), with the copies of them snapshots pin.
    pub rewrites: u64,
    pub pinned: u32,
    pub cow: bool,
    pub room: u64,
    pub source: Source,
    pub inodes: Option<InodeNeed>,
    /// What could not be counted before the run.
    pub uncounted: Vec<String>,
}

impl Judged {
    pub fn need(&self) -> u64 {
        self.files + self.rewrites
    }

    fn space_fits(&self) -> bool {
        self.need() as f64 * (1.0 + MARGIN) <= self.room as f64
    }

    pub fn fits(&self) -> bool {
        self.space_fits() && self.inodes.is_none_or(|i| i.fits())
    }

    fn how(&self) -> String {
        let mut s = format!("{} of files", format_bytes(self.files));
        if self.rewrites > 0 {
            s.push_str(&format!(
                ", {} of rewrites: overwrites counted twice on copy-on-write {}",
                format_bytes(self.rewrites),
                self.fs
            ));
            if self.pinned > 0 {
                s.push_str(&format!(
                    ", and once more for each of {} copies its snapshots pin",
                    self.pinned
                ));
            }
        }
        if let Some(i) = &self.inodes {
            s.push_str(&format!(
                "; {} inodes of {} free",
                format_count(i.need as f64),
                format_count(i.free as f64)
            ));
        }
        s
    }

    fn room_text(&self) -> String {
        let whence = match self.source {
            Source::Measured => "measured",
            Source::Table(t) => t.whence(),
            Source::Whole => "its size",
        };
        let on = |sz: u64| match self.layout.images {
            1 => format!("a {} image", format_bytes(sz)),
            n => format!(
                "{n} images of {} ({} of them hold data)",
                format_bytes(sz),
                self.layout.data
            ),
        };
        match self.size {
            Some(sz) => format!("{} on {} ({whence})", format_bytes(self.room), on(sz)),
            None => format!("{} free now", format_bytes(self.room)),
        }
    }

    /// `fits: 1.6 GiB of 1.9 GiB on btrfs (...)`, for `--check`.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{}: {} {} of {} ({}){}",
            self.label,
            if self.fits() { "fits" } else { "DOES NOT FIT" },
            format_bytes(self.need()),
            self.room_text(),
            self.how(),
            if self.uncounted.is_empty() {
                String::new()
            } else {
                format!("; not counted: {}", self.uncounted.join("; "))
            }
        );
        if !self.fits() {
            s.push_str(&self.fix());
        }
        s
    }

    fn fix(&self) -> String {
        if let Some(i) = self.inodes.filter(|i| !i.fits()) {
            let more = (i.need as f64 * (1.0 + MARGIN)).ceil() as u64 + 11;
            let or = if i.set { "" } else { ", or a larger --size" };
            return format!(
                ": give it more inodes ({}:{}={more}{or}), or ask for fewer files",
                self.fs, i.option
            );
        }
        match self.size.and_then(|_| self.size_that_fits()) {
            Some(sz) => format!(
                ": give --size {} (in a study file, size = \"{}\"), or ask less of it",
                short(sz),
                short(sz)
            ),
            None => ": free space there, or ask less of it".into(),
        }
    }

    /// The smallest of the usual image sizes whose room holds the need.
    fn size_that_fits(&self) -> Option<u64> {
        let def = crate::provision::find(&self.fs)?;
        let want = self.need() as f64 * (1.0 + MARGIN);
        SIZES.iter().copied().find(|&s| {
            let data = (s as f64 * self.layout.data) as u64;
            let r = match (def.room)() {
                None => Some(data),
                Some(t) => room::interpolate(t.points, data),
            };
            r.is_some_and(|r| r as f64 >= want)
        })
    }

    /// The refusal: the target, the need, the room and the fix.
    pub fn refusal(&self) -> String {
        format!(
            "target '{}': the plan needs {} ({}) but {} leaves {}{}",
            self.label,
            format_bytes(self.need()),
            self.how(),
            self.fs,
            self.room_text(),
            self.fix()
        )
    }
}

const GIB: u64 = 1 << 30;
/// The image sizes a fix names, smallest first.
const SIZES: &[u64] = &[
    GIB / 2,
    GIB,
    2 * GIB,
    3 * GIB,
    4 * GIB,
    6 * GIB,
    8 * GIB,
    12 * GIB,
    16 * GIB,
    24 * GIB,
    32 * GIB,
    48 * GIB,
    64 * GIB,
    96 * GIB,
    128 * GIB,
    160 * GIB,
    192 * GIB,
    256 * GIB,
    512 * GIB,
    1024 * GIB,
];

/// `3G`, `512M`.
fn short(bytes: u64) -> String {
    if bytes % GIB == 0 {
        format!("{}G", bytes / GIB)
    } else {
        format!("{}M", bytes >> 20)
    }
}

/// The judgement of target `t` (each image of `size`, None for an existing directory) for these
/// workloads' footprints; None where nothing is counted (a raw device, nothing to count).
pub fn judge(
    t: &TargetSpec,
    size: Option<u64>,
    footprints: &[Footprint],
    workdir: Option<&Path>,
) -> Option<Judged> {
    if footprints.is_empty() {
        return None;
    }
    let caps = crate::provision::caps(&t.fs);
    if caps.raw_device {
        return None;
    }
    let layout = Layout {
        images: crate::provision::layout::members(t),
        data: crate::provision::layout::data_share(t),
    };
    let table = crate::provision::find(&t.fs).and_then(|d| (d.room)());
    let (room, source) = match (size, t.path.as_deref()) {
        (_, Some(dir)) if caps.existing_dir => {
            let st = crate::sys::statvfs(Path::new(dir)).ok()?;
            (st.blocks_avail * st.block_size, Source::Measured)
        }
        (Some(sz), _) => {
            let data = (sz as f64 * layout.data) as u64;
            match (workdir.and_then(|w| room::measured(w, t, sz)), table) {
                (Some(r), _) => (r, Source::Measured),
                (None, Some(tb)) => (room::interpolate(tb.points, data)?, Source::Table(tb)),
                (None, None) => (data, Source::Whole),
            }
        }
        _ => return None,
    };
    let inodes = match (size, table) {
        (Some(sz), Some(tb)) if !caps.existing_dir => tb
            .free_inodes(t, (sz as f64 * layout.data) as u64)
            .zip(match tb.inodes {
                room::Inodes::Fixed { option, .. } => Some(option),
                room::Inodes::AsNeeded => None,
            })
            .map(|(free, option)| InodeNeed {
                need: footprints.iter().map(|f| f.inodes).sum(),
                free,
                option,
                set: t.option(option).is_some(),
            }),
        _ => None,
    };
    let cow = crate::provision::copies_on_write(t);
    let files = footprints.iter().map(|f| f.kept).sum();
    // The footprint that rewrites the most, with the copies its snapshots pin.
    let most = footprints
        .iter()
        .filter(|_| cow)
        .max_by_key(|f| f.rewritten * (1 + u64::from(f.snapshots)));
    let rewrites = most.map_or(0, |f| f.rewritten * (1 + u64::from(f.snapshots)));
    Some(Judged {
        label: t.label.clone(),
        fs: t.fs.clone(),
        size: (!caps.existing_dir).then_some(size).flatten(),
        layout,
        files,
        rewrites,
        pinned: most.map_or(0, |f| f.snapshots),
        cow,
        room,
        source,
        inodes,
        uncounted: footprints
            .iter()
            .flat_map(|f| f.uncounted.clone())
            .collect(),
    })
}

/// Every target of the plan judged; the first that cannot fit refuses the plan.
pub fn check(
    targets: &[TargetSpec],
    sizes: impl Fn(&TargetSpec) -> Option<u64>,
    footprints: &[Footprint],
    workdir: Option<&Path>,
) -> Result<Vec<Judged>, SpecError> {
    let mut out = Vec::new();
    for t in targets {
        if let Some(j) = judge(t, sizes(t), footprints, workdir) {
            if !j.fits() {
                return Err(SpecError(j.refusal()));
            }
            out.push(j);
        }
    }
    Ok(out)
}

impl super::Resolved {
    /// The space judged per target, as `--check` prints it (a plan that does not fit was
    /// refused when it was resolved).
    pub fn space_text(&self, place: &super::Where) -> String {
        let judged = super::room_of(&self.plan, place, &self.workloads, 1).unwrap_or_default();
        if judged.is_empty() {
            return String::new();
        }
        let mut s = String::from(
            "\nspace, judged before the run (files, and rewrites on copy-on-write filesystems, against each target's room):\n",
        );
        for j in judged {
            s.push_str(&format!("  {}\n", j.line()));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(spec: &str) -> TargetSpec {
        crate::provision::parse_target(spec).unwrap()
    }

    const MIB: u64 = 1 << 20;

    fn hpc() -> Footprint {
        Footprint {
            kept: 5 * 256 * MIB,
            rewritten: 4 * 256 * MIB,
            ..Default::default()
        }
    }

    #[test]
    fn overwrites_count_twice_on_copy_on_write_and_once_in_place() {
        let b = judge(&t("btrfs"), Some(2 * GIB), &[hpc()], None).unwrap();
        assert!(b.cow && !b.fits(), "{}", b.line());
        assert_eq!(b.need(), 9 * 256 * MIB);
        let r = b.refusal();
        assert!(
            r.contains("target 'btrfs'") && r.contains("give --size 3G"),
            "{r}"
        );
        assert!(
            r.contains("overwrites counted twice on copy-on-write btrfs"),
            "{r}"
        );
        let x = judge(&t("xfs"), Some(2 * GIB), &[hpc()], None).unwrap();
        assert!(!x.cow && x.fits(), "{}", x.line());
        assert!(
            x.line().starts_with("xfs: fits 1.25 GiB of "),
            "{}",
            x.line()
        );
        let n = judge(&t("btrfs:nodatacow"), Some(2 * GIB), &[hpc()], None).unwrap();
        assert!(!n.cow && n.fits(), "{}", n.line());
        assert!(judge(&t("zfs"), Some(2 * GIB), &[hpc()], None).unwrap().cow);
    }

    #[test]
    fn snapshots_pin_the_old_copy_and_the_first_misfit_refuses_the_plan() {
        let f = Footprint {
            kept: GIB,
            rewritten: GIB,
            snapshots: 1,
            ..Default::default()
        };
        let j = judge(&t("btrfs"), Some(4 * GIB), std::slice::from_ref(&f), None).unwrap();
        assert_eq!(j.need(), 3 * GIB);
        assert!(j.fits(), "{}", j.line());
        let e = check(&[t("xfs"), t("btrfs")], |_| Some(2 * GIB), &[f], None).unwrap_err();
        assert!(e.0.starts_with("target 'btrfs'"), "{e}");
    }

    #[test]
    fn several_images_leave_the_room_of_the_data_they_hold() {
        let one = judge(&t("btrfs"), Some(GIB), &[hpc()], None).unwrap();
        let raid1 = judge(&t("btrfs:raid1"), Some(GIB), &[hpc()], None).unwrap();
        let two = judge(&t("btrfs:devices=2"), Some(GIB), &[hpc()], None).unwrap();
        let big = judge(&t("btrfs"), Some(2 * GIB), &[hpc()], None).unwrap();
        // Two 1 GiB images: raid1 holds one image of data, a stripe two.
        assert_eq!(raid1.room, one.room);
        assert_eq!(two.room, big.room);
        assert!(
            raid1
                .line()
                .contains("2 images of 1 GiB (1 of them hold data)"),
            "{}",
            raid1.line()
        );
        let z = |spec: &str, size: u64| judge(&t(spec), Some(size), &[hpc()], None).unwrap().room;
        assert_eq!(z("zfs:mirror", GIB), z("zfs", GIB));
        assert_eq!(z("zfs:raidz", GIB), z("zfs", 2 * GIB));
        assert_eq!(z("zfs:raidz,devices=4", GIB), z("zfs", 3 * GIB));
        assert_eq!(z("zfs:devices=3", GIB), z("zfs", 3 * GIB));
    }

    #[test]
    fn a_files_run_is_judged_for_the_inodes_mkfs_gives() {
        let files = Footprint {
            kept: 40 * MIB,
            inodes: 10_000,
            ..Default::default()
        };
        let few = judge(
            &t("ext4:inodes=3000"),
            Some(GIB),
            std::slice::from_ref(&files),
            None,
        )
        .unwrap();
        assert_eq!(few.inodes.map(|i| i.free), Some(3000 - 11));
        assert!(!few.fits(), "{}", few.line());
        let r = few.refusal();
        assert!(
            r.contains("10,000 inodes of 2,989 free")
                && r.contains("(ext4:inodes=10511), or ask for fewer files"),
            "{r}"
        );
        // ext4's own ratio at 1 GiB (65,525 free) holds them; a million do not.
        assert!(
            judge(&t("ext4"), Some(GIB), std::slice::from_ref(&files), None)
                .unwrap()
                .fits()
        );
        let million = Footprint {
            inodes: 1_000_000,
            ..files.clone()
        };
        assert!(
            !judge(&t("ext4"), Some(GIB), std::slice::from_ref(&million), None)
                .unwrap()
                .fits()
        );
        // Filesystems that make inodes as they need them are judged for space alone.
        let x = judge(&t("xfs"), Some(GIB), &[million], None).unwrap();
        assert!(x.inodes.is_none() && x.fits(), "{}", x.line());
    }

    #[test]
    fn each_room_says_how_its_table_was_had() {
        let f = [Footprint::kept(GIB, 1)];
        let line = |spec: &str| judge(&t(spec), Some(4 * GIB), &f, None).unwrap().line();
        assert!(
            line("ext4").contains("(measured at its defaults)"),
            "{}",
            line("ext4")
        );
        assert!(
            line("f2fs").contains("(derived from its mkfs's own figures)"),
            "{}",
            line("f2fs")
        );
    }
}
