//! Where a job's workers run: the CPUs they may use (shared, or one each), and fio's NUMA
//! placement (noted: fsbench places nothing by node).

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::job::Job;
use crate::plan::PlanError;

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Cpus, name, help, example, apply)
}

/// What fsbench says of fio's NUMA placement.
fn numa(a: Arg) -> R<Got> {
    a.need()?;
    Ok(Noted(format!("{}: fsbench places neither CPUs nor memory by NUMA node (use cpus_allowed); on a one-node host this changes nothing", a.key)))
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("cpus_allowed", &[]),
        "the CPUs the workers may run on",
        "0,5,8-15",
        |j, a| {
            j.cpus_allowed = parse_cpus(a.need()?)?;
            Ok(Done)
        },
    ),
    opt(
        ("cpus_allowed_policy", &[]),
        "shared, or split: each worker one of them",
        "split",
        |j, a| {
            j.cpus_split = a.choice(&[("shared", false), ("split", true)])?;
            Ok(Done)
        },
    ),
    opt(
        ("numa_cpu_nodes", &[]),
        "fio's NUMA CPU nodes (no effect)",
        "0",
        |_, a| numa(a),
    ),
    opt(
        ("numa_mem_policy", &[]),
        "fio's NUMA memory policy (no effect)",
        "local",
        |_, a| numa(a),
    ),
];

/// fio's CPU list: `0,5,8-15`.
pub(super) fn parse_cpus(v: &str) -> R<Vec<usize>> {
    let bad = || {
        PlanError(format!(
            "cpus_allowed={v}: expected CPU numbers and ranges, e.g. 0,5,8-15"
        ))
    };
    let mut cpus = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a > b || b >= 1024 {
            return Err(bad());
        }
        cpus.extend(a..=b);
    }
    if cpus.is_empty() {
        return Err(bad());
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}
