//! "What limited each result": per target and workload the most common limiter (the terminal
//! and every format), then each record's limiter with the evidence that decided it (report.md
//! and the HTML page). Claims no records of its own: every measured record may carry a limiter.

use crate::metrics::evidence::Evidence;
use crate::report::limits;
use crate::report::view::{Body, Grid, Section, Shown, Study, WorkloadView};
use crate::store::{Outcome, Record};

pub(crate) struct Limits;

const WHY: &str = "each phase's limiter, decided from what its workers, the filesystem's processes, the machine and the devices did (docs/results-schema.md, \"limiter\")";

impl WorkloadView for Limits {
    fn claims(&self, _workload: &str) -> bool {
        false
    }

    fn sections(&self, _mine: &[&Record], study: &Study) -> Vec<Section> {
        let Some((header, rows)) = limits::table(study.records) else {
            return Vec::new();
        };
        let mut out = vec![Section {
            title: "What limited each result".into(),
            shown: Shown::BRIEF,
            body: Body::Table(Grid {
                right: Vec::new(),
                spare: Vec::new(),
                header,
                rows,
                note: Some(format!("{WHY}; the evidence per record: report.md")),
            }),
        }];
        let rows: Vec<Vec<String>> = study
            .records
            .iter()
            .filter(|r| r.outcome == Outcome::Ok)
            .filter_map(|r| Some(evidence_row(r, r.limiter.as_ref()?, r.evidence.as_ref()?)))
            .collect();
        if !rows.is_empty() {
            out.push(Section {
                title: "What limited each result: the evidence".into(),
                shown: Shown {
                    short: false,
                    full: false,
                    ..Shown::DETAIL
                },
                body: Body::Table(Grid {
                    header: [
                        "target", "test", "repeat", "limiter", "rule", "worker", "filesystem",
                        "others", "devices",
                    ]
                    .map(String::from)
                    .to_vec(),
                    rows,
                    note: Some(
                        "worker: the busiest worker's time on a CPU in fsbench (usr) and in the kernel (sys), waiting for a CPU (runq) and blocked; filesystem: its processes and kernel threads, in cores; others: what other processes took, in cores (of it, processes that came and went), and their I/O on the target's devices; devices: utilisation, requests in flight, flush requests, the share of the reads and writes that reached the target's devices, and the flush after a writing phase"
                            .into(),
                    ),
                    right: vec![2],
                    spare: Vec::new(),
                }),
            });
        }
        out
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn evidence_row(r: &Record, l: &crate::metrics::limiter::Limiter, e: &Evidence) -> Vec<String> {
    let worker = e.busiest_worker().map_or_else(String::new, |w| {
        format!(
            "usr {} sys {} runq {} blocked {}",
            pct(w.user),
            pct(w.system),
            pct(w.runq),
            pct(w.blocked)
        )
    });
    let fs: Vec<String> = e
        .filesystem
        .iter()
        .take(3)
        .map(|b| format!("{} {:.2}", b.name, b.cores))
        .collect();
    let others = e.machine.as_ref().map_or_else(String::new, |m| {
        let mut s = format!("{:.2}", m.others);
        if m.gone >= 0.01 {
            s += &format!(" ({:.2} gone)", m.gone);
        }
        if let Some(io) = m.io.as_ref().filter(|x| x.on_stack > 0) {
            s += &format!("; I/O {:.1} MiB", io.on_stack as f64 / (1 << 20) as f64);
        }
        s
    });
    let mut devices: Vec<String> = e
        .devices
        .iter()
        .map(|d| {
            let mut s = format!("{} {} ({:.1})", d.name, pct(d.util), d.in_flight);
            if d.flushes > 0 {
                s += &format!(" {} flushes", d.flushes);
            }
            if !d.medium.is_disk() {
                s += " in memory";
            }
            s
        })
        .collect();
    if let Some(x) = &e.reached {
        let mut reached = Vec::new();
        if let Some(v) = x.read_device {
            reached.push(format!("reads {}", pct(v.min(1.0))));
        }
        if let Some(v) = x.write_device {
            reached.push(format!("writes {}", pct(v.min(1.0))));
        }
        if !reached.is_empty() {
            devices.push(format!("reached: {}", reached.join(", ")));
        }
    }
    if let Some(f) = &e.flush {
        devices.push(format!(
            "flush {:.1} s{}",
            f.seconds,
            f.device
                .as_ref()
                .map_or(String::new(), |d| format!(" {d} {}", pct(f.util)))
        ));
    }
    vec![
        r.target.clone(),
        crate::report::records::test_name(&r.workload, &r.test),
        (r.repeat + 1).to_string(),
        l.kind.to_string(),
        l.rule.clone(),
        worker,
        fs.join(", "),
        others,
        devices.join("; "),
    ]
}
