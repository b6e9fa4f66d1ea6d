//! The one way a plan becomes runnable (`resolve`): every workload built once from its spec,
//! then what is checked before anything is created: the jobs fit where they say (`run`), every
//! workload can run on every target as planned, the device passes its guards, the plan suits
//! several ranks. And, once running, the ranks' agreement on it (`agree`).

use super::targets::here_ctx;
use super::{Named, Options, Resolved, RunnerError, Where};
use crate::frame::RankCtx;
use crate::plan::Plan;
use crate::ranks::Team;
use crate::store::Manifest;
use crate::workload::{self, SpecError, Workload};

/// The name a workload's records carry: its own when it names them, else its name, or the spec
/// as written when the plan runs the same workload twice (`aging` and `aging:snapshots=3/s`), so
/// their records stay apart.
fn record_name(
    w: &crate::plan::WorkloadSpec,
    built: &dyn Workload,
    all: &[crate::plan::WorkloadSpec],
) -> String {
    if let Some(n) = built.record_name() {
        return n.to_string();
    }
    if all.iter().filter(|o| o.name == w.name).count() > 1 {
        w.spec.clone()
    } else {
        w.name.clone()
    }
}

/// A study file, a compare line and a resumed manifest all become a runnable plan here: every
/// workload built once, then every check that can refuse the plan before anything is created
/// (`many`: several ranks under a launcher).
pub fn resolve(plan: Plan, place: &Where, many: bool) -> Result<Resolved, RunnerError> {
    let workloads: Vec<Named> = plan
        .workloads
        .iter()
        .map(|w| {
            workload::build(w, &plan.overrides)
                .map(|b| (record_name(w, b.as_ref(), &plan.workloads), b))
        })
        .collect::<Result<_, _>>()?;
    check_ranks(&plan, many)?;
    check_here(place, &workloads)?;
    check_targets(&plan, place, &workloads)?;
    check_device(&plan, place)?;
    Ok(Resolved { plan, workloads })
}

/// In `run`, the jobs must fit where they say before the study directory is created.
fn check_here(place: &Where, workloads: &[Named]) -> Result<(), RunnerError> {
    let Some(ctx) = here_ctx(place, true, RankCtx::default()) else {
        return Ok(());
    };
    for (_, w) in workloads {
        w.open(&ctx)
            .map_err(|e| RunnerError::Invalid(e.to_string()))?;
    }
    Ok(())
}

/// In `compare --device`, the device must pass the guards before the study directory is
/// created: a refusal is an exit 2 that leaves nothing behind.
fn check_device(plan: &Plan, place: &Where) -> Result<(), RunnerError> {
    match (place, &plan.device) {
        (Where::Provision { .. }, Some(dev)) => {
            crate::provision::safety::check_device(std::path::Path::new(dev), plan.wipe)
                .map_err(|e| RunnerError::Invalid(e.to_string()))
        }
        _ => Ok(()),
    }
}

/// With several ranks, every workload must run on several ranks at once. (Targets are every
/// rank's: rank 0 makes a `dir:` target's scratch directory for all, each node formats and
/// mounts its own of the others, `targets::Provider`.)
fn check_ranks(plan: &Plan, many: bool) -> Result<(), SpecError> {
    if !many {
        return Ok(());
    }
    crate::workload::check_ranks(&plan.workloads)
}

/// Every rank agrees on the plan; rank 0's run id and seed become everyone's.
pub(super) fn agree(
    opts: &Options,
    team: &dyn Team,
    manifest: &mut Manifest,
) -> Result<RankCtx, RunnerError> {
    let rank = team.rank();
    let plan = &opts.resolved.plan;
    let seed = plan
        .overrides
        .seed
        .unwrap_or_else(crate::plan::fio::values::fresh_seed);
    let per_node = crate::ranks::per_node().unwrap_or(1);
    let mut ctx = RankCtx {
        rank,
        seed,
        plan: plan.ranks,
        per_node,
        placement: crate::ranks::placement(per_node),
    };
    if !rank.many() {
        return Ok(ctx);
    }
    let plan = serde_json::to_string(plan).unwrap_or_default();
    let args: Vec<String> = opts.command_line.iter().skip(1).cloned().collect();
    let digest = crate::ranks::digest(&plan, &args);
    let offer = serde_json::to_string(&(&manifest.run_id, seed)).unwrap_or_default();
    let agreed = team
        .agree(&digest, &offer)
        .map_err(|e| RunnerError::Invalid(e.to_string()))?;
    let (run_id, seed): (String, u64) = serde_json::from_str(&agreed)
        .map_err(|e| RunnerError::Invalid(format!("rank 0's run id does not read: {e}")))?;
    manifest.run_id = run_id;
    ctx.seed = seed;
    // Each node's ranks share its target: its room is judged for the most ranks on one node
    // (every rank reaches the same verdict, before anything is made).
    let nodes = team.nodes();
    let sharers = (0..rank.size)
        .map(|r| nodes.within(r).size)
        .max()
        .unwrap_or(1);
    if sharers > 1 {
        judge_room(
            &opts.resolved.plan,
            &opts.place,
            &opts.resolved.workloads,
            sharers,
        )?;
    }
    let nodes = nodes.count();
    manifest.warnings.push(format!(
        "{} ranks on {nodes} node{} (MPI): rank 0 on {} owns this study; records carry every rank's figures in `ranks`{}",
        rank.size,
        if nodes == 1 { "" } else { "s" },
        team.host(),
        if nodes == 1 { "" } else { " and every node's in `nodes`; each node formats and mounts its own targets (a dir: target is rank 0's, for all)" }
    ));
    Ok(ctx)
}

/// In `compare`, every workload must be able to run on every target as planned (sizes, options)
/// before the first target is provisioned.
fn check_targets(plan: &Plan, place: &Where, workloads: &[Named]) -> Result<(), SpecError> {
    if !matches!(place, Where::Provision { .. }) {
        return Ok(());
    }
    for t in &plan.targets {
        if let Some(why) = crate::provision::faultdev::refuse(t, plan.device.is_some(), false) {
            return Err(SpecError(why));
        }
        crate::provision::safety::check_named_devices(t).map_err(SpecError)?;
        if let Some(p) = t
            .path
            .as_deref()
            .filter(|p| !std::path::Path::new(p).is_dir())
        {
            return Err(SpecError(format!(
                "target '{}': {p} is not an existing directory; mount it first, or name another",
                t.label
            )));
        }
        if let Some(why) = t
            .path
            .as_deref()
            .and_then(|p| crate::sys::outfile::kernel_dir(p.as_ref()))
        {
            return Err(SpecError(format!(
                "target '{}': {why}, the kernel's: fsbench makes no files there; name a directory on a data filesystem",
                t.label
            )));
        }
        let size = (!crate::provision::caps(&t.fs).existing_dir)
            .then(|| t.size.unwrap_or(plan.size_bytes));
        for (_, w) in workloads {
            w.check_target(t, size)?;
        }
    }
    judge_room(plan, place, workloads, 1)
}

/// The room judged for `ranks` ranks on each target: refused, or said and run (`--room warn`).
fn judge_room(
    plan: &Plan,
    place: &Where,
    workloads: &[Named],
    ranks: usize,
) -> Result<(), SpecError> {
    let shared = |e: SpecError| match ranks {
        1 => e,
        n => SpecError(format!("{} ({n} ranks share a node's target)", e.0)),
    };
    match room_of(plan, place, workloads, ranks).map_err(shared) {
        Err(e) if plan.on_misfit == crate::plan::OnMisfit::Warn => {
            crate::out::eline!("fsbench: warning: {e}; running anyway (--room warn)");
            Ok(())
        }
        r => r.map(|_| ()),
    }
}

/// The space each target will have against what the workloads leave on it (`room`); a plan
/// that cannot fit is refused. A whole --device is not judged (its size is its own).
pub fn room_of(
    plan: &Plan,
    place: &Where,
    workloads: &[Named],
    ranks: usize,
) -> Result<Vec<super::room::Judged>, SpecError> {
    let Where::Provision { workdir, .. } = place else {
        return Ok(Vec::new());
    };
    if plan.device.is_some() {
        return Ok(Vec::new());
    }
    let footprints: Vec<workload::Footprint> = workloads
        .iter()
        .filter_map(|(_, w)| w.footprint_of_ranks(ranks, &plan.ranks))
        .collect();
    // Several ranks are judged on what each node formats for its own; a directory that is
    // there already (a `dir:`, every node's ranks in it) is judged for one, as before the
    // ranks met: what a stonewalled or time-bound rank writes is not known.
    let targets: Vec<_> = plan
        .targets
        .iter()
        .filter(|t| ranks == 1 || !crate::provision::caps(&t.fs).existing_dir)
        .cloned()
        .collect();
    super::room::check(
        &targets,
        |t| Some(t.size.unwrap_or(plan.size_bytes)),
        &footprints,
        Some(workdir),
    )
}
