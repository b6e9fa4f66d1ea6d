//! Space judged before the run, per target: what the plan's workloads leave on it (their files,
//! and on a copy-on-write filesystem the bytes a phase rewrites in place, written anew before
//! the old copy is freed, and kept while a snapshot pins it) against the room the target will
//! have (`provision::room`: measured). A plan that cannot fit is refused before anything is
//! provisioned, naming the target, the need, the room and the `--size` that would fit.

use std::path::Path;

use crate::plan::units::format_bytes;
use crate::plan::TargetSpec;
use crate::provision::room::{self, Source};
use crate::workload::{Footprint, SpecError};

/// A plan fits a target when its need, plus this share for the filesystem's metadata and
/// allocation, is within the room.
pub const MARGIN: f64 = 0.05;

/// One target's judgement.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub label: String,
    pub fs: String,
    /// The image's size (None: an existing directory's room as it is now).
    pub size: Option<u64>,
    /// Bytes of files the workloads keep on it.
    pub files: u64,
    /// Bytes a copy-on-write filesystem needs besides for rewrites (0 when it rewrites in
    /// place).
    pub rewrites: u64,
    pub cow: bool,
    pub room: u64,
    pub source: Source,
    /// What could not be counted before the run.
    pub uncounted: Vec<String>,
}

impl Judged {
    pub fn need(&self) -> u64 {
        self.files + self.rewrites
    }

    pub fn fits(&self) -> bool {
        self.need() as f64 * (1.0 + MARGIN) <= self.room as f64
    }

    fn how(&self) -> String {
        let mut s = format!("{} of files", format_bytes(self.files));
        if self.rewrites > 0 {
            s.push_str(&format!(
                ", {} of rewrites: overwrites counted twice on copy-on-write {}",
                format_bytes(self.rewrites),
                self.fs
            ));
        }
        s
    }

    fn room_text(&self) -> String {
        let whence = match self.source {
            Source::Measured => "measured",
            Source::Table => "measured at its defaults",
            Source::Whole => "its size",
        };
        match self.size {
            Some(sz) => format!(
                "{} on a {} image ({whence})",
                format_bytes(self.room),
                format_bytes(sz)
            ),
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
            let r = if def.room.is_empty() {
                Some(s)
            } else {
                room::interpolate(def.room, s)
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

/// The judgement of target `t` (image `size`, None for an existing directory) for these
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
    let (room, source) = match (size, t.path.as_deref()) {
        (_, Some(dir)) if caps.existing_dir => {
            let st = crate::sys::statvfs(Path::new(dir)).ok()?;
            (st.blocks_avail * st.block_size, Source::Measured)
        }
        (Some(sz), _) => match workdir.and_then(|w| room::measured(w, t, sz)) {
            Some(r) => (r, Source::Measured),
            None => {
                let def = crate::provision::find(&t.fs)?;
                match room::interpolate(def.room, sz) {
                    Some(r) => (r, Source::Table),
                    None => (sz, Source::Whole),
                }
            }
        },
        _ => return None,
    };
    let cow = crate::provision::copies_on_write(t);
    let files = footprints.iter().map(|f| f.kept).sum();
    let rewrites = if cow {
        footprints
            .iter()
            .map(|f| f.rewritten * (1 + u64::from(f.snapshots)))
            .max()
            .unwrap_or(0)
    } else {
        0
    };
    Some(Judged {
        label: t.label.clone(),
        fs: t.fs.clone(),
        size: (!caps.existing_dir).then_some(size).flatten(),
        files,
        rewrites,
        cow,
        room,
        source,
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
        let judged = super::room_of(&self.plan, place, &self.workloads).unwrap_or_default();
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
}
