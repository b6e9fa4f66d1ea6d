//! The `mdtest:` workload's records as mdtest 4 prints a run (`report --format mdtest`): the
//! header and mdtest's "SUMMARY rate" table (or time with -Z, both with -P): per operation the
//! largest, smallest and mean of the iterations' rates and their sample standard deviation, the
//! rows mdtest prints (those of the directory and file tests it ran, 0 for a phase not run,
//! then the tree's), so that what parses mdtest's output parses these.

use super::ior::{args, cfg, runs, spread};
use crate::metrics::name as metric;
use crate::store::Record;

/// mdtest's rows in its order: the summary's name and the record's test.
const ROWS: &[(&str, &str)] = &[
    ("Directory creation", "dir-create"),
    ("Directory stat", "dir-stat"),
    ("Directory rename", "dir-rename"),
    ("Directory removal", "dir-remove"),
    ("File creation", "file-create"),
    ("File stat", "file-stat"),
    ("File read", "file-read"),
    ("File removal", "file-remove"),
    ("Tree creation", "tree-create"),
    ("Tree removal", "tree-remove"),
];

/// Every mdtest run of the study, as mdtest prints it.
pub(crate) fn text(records: &[Record]) -> String {
    runs(records, "mdtest")
        .iter()
        .map(|run| one(run))
        .collect::<Vec<_>>()
        .join("\n")
}

fn one(run: &[&Record]) -> String {
    let first = run[0];
    let s = |p: &[&str]| {
        cfg(first, p)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    let n = |p: &[&str]| cfg(first, p).and_then(|v| v.as_f64()).unwrap_or(0.0);
    let args: Vec<String> = args(first, "mdtest")
        .iter()
        .map(|w| format!(" '{w}'"))
        .collect();
    let tasks = n(&["tasks"]).max(1.0);
    let per_node = n(&["tasks_per_node"]).max(1.0);
    let iterations = n(&["mdtest", "iterations"]).max(1.0) as usize;
    let items = s(&["mdtest", "items"]);
    let mut out = format!("-- started at {} --\n\n", first.started_at);
    out += &format!(
        "mdtest-4.1.0+dev was launched with {tasks} total task(s) on {} node(s)\n",
        (tasks / per_node).ceil()
    );
    out += &format!("Command line used: mdtest{}\n", args.concat());
    out += &format!("{:<20}: {}: {}\n", "Path", first.target, s(&["dir"]));
    let total = tasks * n(&["mdtest", "per_rank"]);
    out += &match items.as_str() {
        "files" => format!("{tasks} tasks, {total} files\n"),
        "dirs" => format!("{tasks} tasks, {total} directories\n"),
        _ => format!("{tasks} tasks, {total} files/directories\n"),
    };
    let print = s(&["mdtest", "print"]);
    for time in [false, true] {
        let shown = match print.as_str() {
            "both" => true,
            "time" => time,
            _ => !time,
        };
        if shown {
            out += &table(run, time, iterations, &items, tasks);
        }
    }
    out += &format!(
        "-- finished at {} --\n",
        run.last().map_or("", |r| r.started_at.as_str())
    );
    out
}

/// The SUMMARY table: rates (or times) per operation over the iterations.
fn table(run: &[&Record], time: bool, iterations: usize, items: &str, _tasks: f64) -> String {
    let mut out = match time {
        true => format!("\nSUMMARY time (in ms/op): (of {iterations} iterations)\n"),
        false => format!("\nSUMMARY rate (in ops/sec): (of {iterations} iterations)\n"),
    };
    out += "   Operation                     Max            Min           Mean        Std Dev\n";
    out += "   ---------                     ---            ---           ----        -------\n";
    let (from, to) = match items {
        "files" => (4, 8),
        "dirs" => (0, 4),
        _ => (0, 8),
    };
    for (k, (label, test)) in ROWS.iter().enumerate() {
        if k < 8 && !(from..to).contains(&k) {
            continue;
        }
        let v: Vec<f64> = (0..iterations)
            .map(|j| {
                let name = match iterations {
                    1 => test.to_string(),
                    _ => format!("{test}.{j}"),
                };
                run.iter()
                    .find(|r| r.test == name)
                    .and_then(|r| {
                        r.metrics.get(if time {
                            metric::RUNTIME_S
                        } else {
                            metric::OPS_PER_SEC
                        })
                    })
                    .copied()
                    .unwrap_or(0.0)
            })
            .collect();
        let (max, min, mean, sd) = spread(&v, true);
        out += &match k < 8 {
            true => format!("   {label:<18}     {max:14.3} {min:14.3} {mean:14.3} {sd:14.3}\n"),
            false => format!("   {label:<22} {max:14.3} {min:14.3} {mean:14.3} {sd:14.3}\n"),
        };
    }
    out
}
