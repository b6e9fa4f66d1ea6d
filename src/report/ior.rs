//! The `ior:` workload's records as IOR 4 prints a run (`report --format ior`): the header, the
//! test's options, a Results line per iteration's write and read, and the "Summary of all tests"
//! table with IOR's columns, widths and statistics (population standard deviation over
//! iterations), so that what parses IOR's output parses these. One such run per target, ior
//! workload and repeat.

use crate::metrics::name as metric;
use crate::store::Record;

const MIB: f64 = 1048576.0;

/// The records of each run of a tool (`ior`, `mdtest`): grouped by target, workload and repeat,
/// in the study's order.
pub(crate) fn runs<'a>(records: &'a [Record], tool: &str) -> Vec<Vec<&'a Record>> {
    let mut out: Vec<Vec<&Record>> = Vec::new();
    for r in records.iter().filter(|r| r.workload_name() == tool) {
        let same =
            |x: &&Record| x.target == r.target && x.workload == r.workload && x.repeat == r.repeat;
        match out.iter_mut().find(|g| g.first().is_some_and(same)) {
            Some(g) => g.push(r),
            None => out.push(vec![r]),
        }
    }
    out
}

/// A record's config value at `key` (the tool's plan is under the tool's name).
pub(crate) fn cfg<'a>(r: &'a Record, path: &[&str]) -> Option<&'a serde_json::Value> {
    path.iter().try_fold(r.config.as_ref()?, |v, k| v.get(k))
}

fn num(r: &Record, path: &[&str]) -> f64 {
    cfg(r, path).and_then(|v| v.as_f64()).unwrap_or(0.0)
}

/// The tool's command line as the record keeps it (its words).
pub(crate) fn args<'a>(r: &'a Record, tool: &str) -> Vec<&'a str> {
    cfg(r, &[tool, "args"])
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
        .unwrap_or_default()
}

/// The largest, smallest and mean of the iterations' figures, and their standard deviation
/// (IOR's over the population, `sample` mdtest's over a sample: 0 of one).
pub(crate) fn spread(v: &[f64], sample: bool) -> (f64, f64, f64, f64) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    let squares = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
    let sd = match (sample, v.len()) {
        (true, 0 | 1) => 0.0,
        (true, _) => (squares / (n - 1.0)).sqrt(),
        (false, _) => (squares / n).sqrt(),
    };
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    (max, min, mean, sd)
}

fn flag(r: &Record, path: &[&str]) -> bool {
    cfg(r, path).and_then(|v| v.as_bool()).unwrap_or(false)
}

fn metric(r: &Record, k: &str) -> f64 {
    r.metrics.get(k).copied().unwrap_or(0.0)
}

/// IOR's PPDouble: left-justified in 10, 6 decimals below 1, 2 below 3600, else none.
fn pp(x: f64) -> String {
    let prec = match x {
        x if x < 1.0 => 6,
        x if x < 3600.0 => 2,
        _ => 0,
    };
    format!("{:<10.*}", prec, x)
}

/// IOR's HumanReadable, base two: whole units as integers, else two decimals.
fn human(bytes: f64) -> String {
    let v = bytes as u64;
    for (unit, name) in [(1u64 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB")] {
        if v >= unit {
            return match v % unit {
                0 => format!("{} {name}", v / unit),
                _ => format!("{:.2} {name}", v as f64 / unit as f64),
            };
        }
    }
    format!("{v} bytes")
}

/// Every ior run of the study, as IOR prints it.
pub(crate) fn text(records: &[Record]) -> String {
    runs(records, "ior")
        .iter()
        .map(|run| one(run))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What IOR prints of a test, from its first record's config.
struct Test<'a> {
    first: &'a Record,
    tasks: u64,
    per_node: u64,
    fpp: bool,
    reorder: bool,
    block: f64,
    xfer: f64,
    segs: f64,
    reps: u64,
}

fn kv(k: &str, v: impl std::fmt::Display) -> String {
    format!("{k:<20}: {v}\n")
}

fn one(run: &[&Record]) -> String {
    let first = run[0];
    let t = Test {
        first,
        tasks: num(first, &["tasks"]).max(1.0) as u64,
        per_node: num(first, &["tasks_per_node"]).max(1.0) as u64,
        fpp: cfg(first, &["ior", "access"]).and_then(|v| v.as_str()) == Some("file-per-process"),
        reorder: flag(first, &["ior", "reorder"]),
        block: num(first, &["ior", "block"]),
        xfer: num(first, &["ior", "transfer"]),
        segs: num(first, &["ior", "segments"]),
        reps: num(first, &["ior", "iterations"]).max(1.0) as u64,
    };
    let mut s = t.header() + &t.options() + &t.results(run);
    s += "\nSummary of all tests:\n";
    s += &format!(
        "{:<9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>13}",
        "Operation",
        "Max(MiB)",
        "Min(MiB)",
        "Mean(MiB)",
        "StdDev",
        "Max(OPs)",
        "Min(OPs)",
        "Mean(OPs)",
        "StdDev",
        "Mean(s)",
        "Stonewall(s)",
        "Stonewall(MiB)"
    );
    s += " Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt ";
    s += &format!(
        "{:>8} {:>8} {:>9} {:>5}",
        " blksiz", "xsize", "aggs(MiB)", "API"
    );
    s += " RefNum\n";
    for access in ["write", "read"] {
        let rs: Vec<&&Record> = run.iter().filter(|r| r.test.starts_with(access)).collect();
        if !rs.is_empty() {
            s += &t.summary_line(access, &rs);
        }
    }
    s + &kv("Finished", run.last().map_or("", |r| r.started_at.as_str()))
}

impl Test<'_> {
    fn header(&self) -> String {
        let f = self.first;
        let host = f.ranks.first().map_or("local", |r| r.host.as_str());
        let file = cfg(f, &["file"]).and_then(|v| v.as_str()).unwrap_or("");
        let mut s = String::from("IOR-4.1.0+dev: MPI Coordinated Test of Parallel I/O\n");
        s += &kv("Began", &f.started_at);
        s += &kv("Command line", format!("ior {}", args(f, "ior").join(" ")));
        s += &kv("Machine", format!("Linux {host}"));
        s += &kv("TestID", 0);
        s += &kv("StartTime", &f.started_at);
        s + &kv("Path", format!("{}: {file}", f.target))
    }

    fn options(&self) -> String {
        let f = self.first;
        let test_file = cfg(f, &["ior", "test_file"])
            .and_then(|v| v.as_str())
            .unwrap_or("testFile");
        let shuffled = cfg(f, &["ior", "order"]).and_then(|v| v.as_str()) == Some("shuffled");
        let mut s = String::from("\nOptions: \n");
        s += &kv("api", "POSIX");
        s += &kv("apiVersion", "");
        s += &kv("test filename", test_file);
        s += &kv(
            "access",
            if self.fpp {
                "file-per-process"
            } else {
                "single-shared-file"
            },
        );
        s += &kv("type", "independent");
        s += &kv("segments", self.segs);
        s += &kv(
            "ordering in a file",
            if shuffled { "random" } else { "sequential" },
        );
        if self.reorder {
            s += &kv("ordering inter file", "constant task offset");
            s += &kv("task offset", num(f, &["ior", "task_offset"]));
        } else {
            s += &kv("ordering inter file", "no tasks offsets");
        }
        s += &kv("nodes", self.tasks.div_ceil(self.per_node));
        s += &kv("tasks", self.tasks);
        s += &kv("clients per node", self.per_node);
        s += &kv("repetitions", self.reps);
        s += &kv("xfersize", human(self.xfer));
        s += &kv("blocksize", human(self.block));
        s + &kv(
            "aggregate filesize",
            human(self.block * self.segs * self.tasks as f64),
        )
    }

    /// A Results line per access of each iteration.
    fn results(&self, run: &[&Record]) -> String {
        let mut s = String::from("\nResults: \n\n");
        s += "access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s)   total(s)   iter\n";
        s += "------    ---------  ----       ----------  ---------- ---------  --------   --------   --------   --------   ----\n";
        for r in run {
            let access = if r.test.starts_with("write") {
                "write"
            } else {
                "read"
            };
            s += &format!(
                "{access:<10}{} {} {}  {} {} {} {} {} {} {:<4}\n",
                pp(metric(r, metric::BYTES_PER_SEC) / MIB),
                pp(metric(r, "iops")),
                pp(metric(r, metric::IOR_LATENCY_S)),
                pp(self.block / 1024.0),
                pp(self.xfer / 1024.0),
                pp(metric(r, metric::IOR_OPEN_S)),
                pp(metric(r, metric::IOR_XFER_S)),
                pp(metric(r, metric::IOR_CLOSE_S)),
                pp(metric(r, metric::RUNTIME_S)),
                metric(r, "iteration") as u64,
            );
        }
        s
    }

    /// One line of IOR's summary: bandwidth and operations over the iterations (max, min, mean,
    /// population standard deviation), the mean time, the stonewall, and the test's parameters.
    fn summary_line(&self, access: &str, rs: &[&&Record]) -> String {
        let (first, tasks, per_node, reps) = (self.first, self.tasks, self.per_node, self.reps);
        let (fpp, reorder) = (self.fpp, self.reorder);
        let xfer = num(first, &["ior", "transfer"]).max(1.0);
        let bw: Vec<f64> = rs
            .iter()
            .map(|r| metric(r, metric::BYTES_PER_SEC))
            .collect();
        let (bmax, bmin, bmean, bsd) = spread(&bw, false);
        let ops: Vec<f64> = bw.iter().map(|b| b / xfer).collect();
        let (omax, omin, omean, osd) = spread(&ops, false);
        let secs = rs.iter().map(|r| metric(r, metric::RUNTIME_S)).sum::<f64>() / rs.len() as f64;
        let wear = flag(first, &["ior", "wear_out"]);
        let (wall_s, wall_mib) = match wear {
            true => {
                let t: f64 = rs.iter().map(|r| metric(r, metric::IOR_STONEWALL_S)).sum();
                let avg: f64 = rs
                    .iter()
                    .map(|r| metric(r, metric::IOR_STONEWALL_BYTES) / tasks as f64)
                    .sum();
                (
                    format!("{:10.2}", t / rs.len() as f64),
                    format!("{:13.2}", avg / t.max(1e-9) / MIB),
                )
            }
            false => (format!("{:>10}", "NA"), format!("{:>13}", "NA")),
        };
        let agg = metric(rs[0], "bytes") / MIB;
        format!(
        "{access:<9} {:10.2} {:10.2} {:10.2} {:10.2} {:10.2} {:10.2} {:10.2} {:10.2} {:10.5} {wall_s} {wall_mib} {:5} {:6} {:3} {:4} {:3} {:5} {:8} {:9} {:4} {:6} {:8} {:8} {:9.1} {:>3} {:6}\n",
        bmax / MIB, bmin / MIB, bmean / MIB, bsd / MIB, omax, omin, omean, osd, secs,
        0, tasks, per_node, reps, fpp as u8, reorder as u8,
        num(first, &["ior", "task_offset"]) as u64, 0, 0,
        num(first, &["ior", "segments"]) as u64, num(first, &["ior", "block"]) as u64, xfer as u64,
        agg, "POSIX", num(first, &["ior", "ref_num"]) as i64,
    )
    }
}
