//! io500's twelve scored phases as a table, in io500's order: each is one run of IOR or mdtest
//! with io500's command line (io500's `phase_*.c`: `-C -Q 1 -g -k -e` and the stonewall status
//! file for IOR, `-P -N 1 -x` for mdtest), or fsbench's find; the record of the run that io500
//! scores; the unit io500 prints it in. And io500's score (`main.c:calc_score`): the geometric
//! mean of the IOR phases in GiB/s, of the mdtest and find phases in kIOPS, and the square root of
//! their product.

/// What a phase runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Ior,
    Mdtest,
    Find,
}

/// The unit io500 prints a phase's figure in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// IOR's bandwidth, bytes per second / 2^30 (the BW group of the score).
    GiBps,
    /// Items per second / 1000 (the MD group of the score).
    Kiops,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::GiBps => "GiB/s",
            Unit::Kiops => "kIOPS",
        }
    }
}

/// The sizes of a run: io500's (the defaults) or a smaller scale's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sizes {
    /// Seconds after which a write phase stops issuing (IOR's -D, mdtest's -W; io500's 300).
    pub stonewall: u64,
    /// ior-easy's block per rank (-b; io500's 9920000m, ended by the stonewall).
    pub easy_block: String,
    /// ior-hard's segments (-s; io500's 10,000,000 of 47,008 bytes per rank).
    pub hard_segments: u64,
    /// mdtest-easy's and mdtest-hard's files per rank (-n; io500's 1,000,000 each).
    pub easy_files: u64,
    pub hard_files: u64,
}

impl Default for Sizes {
    fn default() -> Sizes {
        Sizes {
            stonewall: 300,
            easy_block: "9920000m".into(),
            hard_segments: 10_000_000,
            easy_files: 1_000_000,
            hard_files: 1_000_000,
        }
    }
}

/// io500's shortest write phase for a run on its list (`minwrite`): a shorter one marks the run
/// INVALID.
pub const MIN_WRITE_S: f64 = 300.0;

/// The directory of the run's files, relative to the target, and io500's timestamp file in it
/// (made after mdtest-easy-write; find looks for files newer than it).
pub const DIR: &str = "io500";
pub const TIMESTAMP: &str = "io500/timestampfile";

/// One scored phase.
pub struct Row {
    /// io500's name, the record's test.
    pub name: &'static str,
    pub tool: Tool,
    /// The command line (IOR's or mdtest's) for these sizes, but for the step.
    pub base: fn(&Sizes) -> String,
    /// What the run does of its tool's steps: IOR's -w or -r, mdtest's -C, -T, -E or -r.
    pub step: &'static str,
    /// The test of the run's record io500 scores (mdtest's runs also make and remove its tree).
    pub scored: &'static str,
    pub unit: Unit,
    /// A write phase: io500's 300 s rule applies to it.
    pub writes: bool,
    /// The timestamp file is made before it (io500's "timestamp" step).
    pub stamp_before: bool,
}

/// The stonewall of a write (IOR's -D with wear-out, mdtest's -W after -Y's sync); none else.
fn wall(s: &Sizes, step: &str) -> String {
    match step {
        "-w" => format!(" -D {} -O stoneWallingWearOut=1", s.stonewall),
        "-C" => format!(" -Y -W {}", s.stonewall),
        _ => String::new(),
    }
}

// What each tool's command line holds besides the step (-w, -r; -C, -T, -E, -r) and its wall.
fn ior_easy(s: &Sizes) -> String {
    let f = format!(
        "-o {DIR}/ior-easy/ior_file_easy -O stoneWallingStatusFile={DIR}/ior-easy.stonewall"
    );
    format!("-C -Q 1 -g -k -e {f} -t 2m -b {} -F", s.easy_block)
}

fn ior_hard(s: &Sizes) -> String {
    let f = format!("-o {DIR}/ior-hard/file -O stoneWallingStatusFile={DIR}/ior-hard.stonewall");
    format!(
        "-C -Q 1 -g -k -e {f} -t 47008 -b 47008 -s {}",
        s.hard_segments
    )
}

fn md_easy(s: &Sizes) -> String {
    let d = format!("-d {DIR}/mdtest-easy -x {DIR}/mdtest-easy.stonewall");
    format!("-n {} -u -L -F -P -N 1 {d}", s.easy_files)
}

fn md_hard(s: &Sizes) -> String {
    let d = format!("-d {DIR}/mdtest-hard -x {DIR}/mdtest-hard.stonewall");
    format!("-n {} -t -w 3901 -e 3901 -P -N 1 -F {d}", s.hard_files)
}

fn find(_: &Sizes) -> String {
    format!("{DIR} -newer {TIMESTAMP} -size 3901c -name *01*")
}

const fn row(
    name: &'static str,
    tool: Tool,
    (base, step): (fn(&Sizes) -> String, &'static str),
    scored: &'static str,
    unit: Unit,
    writes: bool,
) -> Row {
    Row {
        name,
        tool,
        base,
        step,
        scored,
        unit,
        writes,
        stamp_before: false,
    }
}

impl Row {
    /// The command line of the run for these sizes.
    pub fn args(&self, s: &Sizes) -> String {
        let base = (self.base)(s);
        match self.step {
            "" => base,
            step => format!("{base} {step}{}", wall(s, step)),
        }
    }
}

use Tool::*;
use Unit::*;

/// io500's scored phases in io500's order (standard mode).
pub static PHASES: &[Row] = &[
    row(
        "ior-easy-write",
        Ior,
        (ior_easy, "-w"),
        "write",
        GiBps,
        true,
    ),
    row(
        "mdtest-easy-write",
        Mdtest,
        (md_easy, "-C"),
        "file-create",
        Kiops,
        true,
    ),
    Row {
        stamp_before: true,
        ..row(
            "ior-hard-write",
            Ior,
            (ior_hard, "-w"),
            "write",
            GiBps,
            true,
        )
    },
    row(
        "mdtest-hard-write",
        Mdtest,
        (md_hard, "-C"),
        "file-create",
        Kiops,
        true,
    ),
    row("find", Find, (find, ""), "find", Kiops, false),
    row("ior-easy-read", Ior, (ior_easy, "-r"), "read", GiBps, false),
    row(
        "mdtest-easy-stat",
        Mdtest,
        (md_easy, "-T"),
        "file-stat",
        Kiops,
        false,
    ),
    row("ior-hard-read", Ior, (ior_hard, "-r"), "read", GiBps, false),
    row(
        "mdtest-hard-stat",
        Mdtest,
        (md_hard, "-T"),
        "file-stat",
        Kiops,
        false,
    ),
    row(
        "mdtest-easy-delete",
        Mdtest,
        (md_easy, "-r"),
        "file-remove",
        Kiops,
        false,
    ),
    row(
        "mdtest-hard-read",
        Mdtest,
        (md_hard, "-E"),
        "file-read",
        Kiops,
        false,
    ),
    row(
        "mdtest-hard-delete",
        Mdtest,
        (md_hard, "-r"),
        "file-remove",
        Kiops,
        false,
    ),
];

/// io500's score from its phases' figures: (bw, md, score). A group with a phase missing or at
/// 0 is 0, and so is the score (io500 then marks the run INVALID).
pub fn score(values: &[(&str, f64)]) -> (f64, f64, f64) {
    let mean = |unit: Unit| {
        let of: Vec<Option<f64>> = PHASES
            .iter()
            .filter(|r| r.unit == unit)
            .map(|r| {
                values
                    .iter()
                    .find(|(n, _)| *n == r.name)
                    .map(|(_, v)| *v)
                    .filter(|v| *v > 0.0 && v.is_finite())
            })
            .collect();
        match of.iter().all(Option::is_some) {
            true => (of.iter().flatten().map(|v| v.ln()).sum::<f64>() / of.len() as f64).exp(),
            false => 0.0,
        }
    };
    let (bw, md) = (mean(GiBps), mean(Kiops));
    (bw, md, (bw * md).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twelve_phases_in_io500s_order_four_of_bandwidth() {
        let names: Vec<&str> = PHASES.iter().map(|r| r.name).collect();
        assert_eq!(
            names,
            [
                "ior-easy-write",
                "mdtest-easy-write",
                "ior-hard-write",
                "mdtest-hard-write",
                "find",
                "ior-easy-read",
                "mdtest-easy-stat",
                "ior-hard-read",
                "mdtest-hard-stat",
                "mdtest-easy-delete",
                "mdtest-hard-read",
                "mdtest-hard-delete"
            ]
        );
        assert_eq!(PHASES.iter().filter(|r| r.unit == GiBps).count(), 4);
        assert_eq!(PHASES.iter().filter(|r| r.writes).count(), 4);
    }

    #[test]
    fn the_score_is_io500s_formula() {
        let v: Vec<(&str, f64)> = PHASES
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name, 1.0 + i as f64))
            .collect();
        let (bw, md, s) = score(&v);
        // ior phases: 1, 3, 6, 8; the others 2, 4, 5, 7, 9, 10, 11, 12.
        let gm = |xs: &[f64]| xs.iter().product::<f64>().powf(1.0 / xs.len() as f64);
        let want_bw = gm(&[1.0, 3.0, 6.0, 8.0]);
        let want_md = gm(&[2.0, 4.0, 5.0, 7.0, 9.0, 10.0, 11.0, 12.0]);
        assert!((bw - want_bw).abs() < 1e-9, "{bw} {want_bw}");
        assert!((md - want_md).abs() < 1e-9, "{md} {want_md}");
        assert!((s - (want_bw * want_md).sqrt()).abs() < 1e-9);
        // A phase missing or at 0 makes its group, and the score, 0.
        let (bw, md, s) = score(&v[1..]);
        assert_eq!((bw, s), (0.0, 0.0));
        assert!(md > 0.0);
    }

    #[test]
    fn io500s_command_lines_read_as_ior_and_mdtest_plans() {
        let s = Sizes::default();
        for r in PHASES {
            let args = r.args(&s);
            let ok = match r.tool {
                Ior => crate::plan::hpc::ior::IorPlan::parse(&args).map(|_| ()),
                Mdtest => crate::plan::hpc::mdtest::MdPlan::parse(&args).map(|_| ()),
                Find => Ok(()),
            };
            assert!(ok.is_ok(), "{}: {args}: {:?}", r.name, ok.err());
        }
    }
}
