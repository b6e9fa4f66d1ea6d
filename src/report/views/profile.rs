//! Where the time went (`--profile`): per test, the targets side by side, the shares of
//! fsbench's own code, the libraries, the kernel and the filesystem's daemon, and the kernel
//! functions that took most; then the flame graphs (HTML: embedded; report.md: links to the
//! SVG files the study writes into `profiles/`), and what the host did not let fsbench profile.
//! Claims no records. Pure.

use crate::profile::folded::Kind;
use crate::report::profiles::{graphs, groups, Group, Merged};
use crate::report::view::{Body, Grid, Section, Shown, Study, WorkloadView};
use crate::store::{note, Record};

pub(crate) struct Profiles;

/// How many kernel functions each target brings to the table.
const EACH: usize = 6;
/// The most kernel-function rows of a table.
const ROWS: usize = 12;

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn table(g: &Group, kind: Kind) -> Grid {
    let sides: Vec<(&str, &Merged)> = g
        .sides
        .iter()
        .filter_map(|s| Some((s.target, s.get(kind)?)))
        .collect();
    let mut header = vec![String::new()];
    header.extend(sides.iter().map(|(t, _)| t.to_string()));
    let mut rows: Vec<Vec<String>> = Vec::new();
    let row = |name: &str, f: &dyn Fn(&Merged) -> f64| {
        let mut r = vec![name.to_string()];
        r.extend(sides.iter().map(|(_, m)| pct(f(m))));
        r
    };
    rows.push(row("fsbench's own code", &|m| m.shares.fsbench));
    rows.push(row("libraries (libc)", &|m| m.shares.libraries));
    rows.push(row("kernel", &|m| m.shares.kernel));
    if sides.iter().any(|(_, m)| m.shares.daemon > 0.0) {
        rows.push(row("the filesystem's daemon", &|m| m.shares.daemon));
    }
    if sides.iter().any(|(_, m)| m.shares.unknown > 0.0) {
        rows.push(row("[unknown]", &|m| m.shares.unknown));
    }
    // Each target's top kernel functions, the largest share anywhere first.
    let mut funcs: Vec<(&str, f64)> = Vec::new();
    for (_, m) in &sides {
        for f in m.shares.top_kernel.iter().take(EACH) {
            match funcs.iter_mut().find(|(n, _)| *n == f.function) {
                Some(x) => x.1 = x.1.max(f.share),
                None => funcs.push((&f.function, f.share)),
            }
        }
    }
    funcs.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (name, _) in funcs.into_iter().take(ROWS) {
        let mut r = vec![format!("kernel: {name}")];
        r.extend(sides.iter().map(|(_, m)| {
            m.shares
                .top_kernel
                .iter()
                .find(|f| f.function == name)
                .map_or("-".into(), |f| pct(f.share))
        }));
        rows.push(r);
    }
    let total = |m: &Merged| match kind {
        Kind::OnCpu => crate::plan::units::format_count(m.total as f64),
        Kind::OffCpu => format!("{:.2} s", m.total as f64 / 1e6),
    };
    let mut last = vec![match kind {
        Kind::OnCpu => "samples".to_string(),
        Kind::OffCpu => "time blocked".to_string(),
    }];
    last.extend(sides.iter().map(|(_, m)| total(m)));
    rows.push(last);
    let rate = sides.first().map_or(String::new(), |(_, m)| m.rate.clone());
    let note = match kind {
        Kind::OnCpu => format!(
            "Shares of the samples ({rate}, per thread) of fsbench's workers, its io_uring workers and the filesystem's daemon, over the measured phase. A kernel function's share is the time in it itself (what it called not counted). Flame graphs: report.html, profiles/*.svg."
        ),
        Kind::OffCpu => "Shares of the time the same threads were blocked (switched off the CPU, not preempted), over the measured phase. A kernel function is where a thread waited: the deepest frame that is not the scheduler's. Flame graphs: report.html, profiles/*.svg.".to_string(),
    };
    Grid::new(header, rows, note)
}

fn title(kind: Kind, test: &str) -> String {
    match kind {
        Kind::OnCpu => format!("Where the time went, on the CPU: {test}"),
        Kind::OffCpu => format!("Where the time went, off the CPU (blocked): {test}"),
    }
}

/// The flame graphs of a test: embedded in the page, linked from report.md.
fn flames(g: &Group, kind: Kind, baseline: &str) -> Option<Section> {
    let gs = graphs(g, kind, baseline);
    if gs.is_empty() {
        return None;
    }
    let heading = match kind {
        Kind::OnCpu => format!("Flame graphs, on the CPU: {}", g.name()),
        Kind::OffCpu => format!("Flame graphs, off the CPU: {}", g.name()),
    };
    let mut html = format!("<h2>{}</h2>", super::super::markup::esc(&heading));
    let mut md = format!("## {heading}\n\n");
    for x in &gs {
        html.push_str(&super::super::flame::embed(&x.svg, &x.label));
        md.push_str(&format!("- [{}]({})\n", x.label, x.file));
    }
    md.push('\n');
    Some(Section {
        title: heading,
        shown: Shown {
            short: false,
            full: false,
            md: true,
            html: true,
        },
        body: Body::Own {
            term: String::new(),
            md,
            html,
        },
    })
}

/// What the host did not let fsbench profile, once each.
fn refused(records: &[Record]) -> Option<Section> {
    let mut lines: Vec<String> = Vec::new();
    for r in records {
        for n in &r.notes {
            if note::kind(n) == note::Kind::Profile {
                let t = note::text(n).to_string();
                if !lines.contains(&t) {
                    lines.push(t);
                }
            }
        }
    }
    (!lines.is_empty()).then(|| Section {
        title: "Profiles: what this host did not allow".into(),
        shown: Shown::DETAIL,
        body: Body::Lines(lines),
    })
}

impl WorkloadView for Profiles {
    fn claims(&self, _workload: &str) -> bool {
        false
    }

    fn sections(&self, _mine: &[&Record], study: &Study) -> Vec<Section> {
        let mut out = Vec::new();
        let gs = groups(study.records);
        for kind in Kind::ALL {
            for g in gs.iter().filter(|g| g.has(kind)) {
                out.push(Section {
                    title: title(kind, &g.name()),
                    shown: Shown::DETAIL,
                    body: Body::Table(table(g, kind)),
                });
            }
        }
        for kind in Kind::ALL {
            for g in gs.iter().filter(|g| g.has(kind)) {
                out.extend(flames(g, kind, study.baseline));
            }
        }
        out.extend(refused(study.records));
        out
    }
}
