//! What is checked before anything is created: the jobs fit where they say (`run`), every
//! workload can run on every target as planned, the device passes its guards, the plan suits
//! several ranks, and the ranks agree on it.

use super::targets::here_ctx;
use super::{Options, RunnerError, Where};
use crate::frame::RankCtx;
use crate::ranks::Team;
use crate::store::Manifest;
use crate::workload::{SpecError, Workload};

/// In `run`, the jobs must fit where they say before the study directory is created.
pub(super) fn check_here(
    opts: &Options,
    workloads: &[(String, Box<dyn Workload>)],
    ranks: RankCtx,
) -> Result<(), RunnerError> {
    let Some(ctx) = here_ctx(&opts.place, opts.quiet, ranks) else {
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
pub(super) fn check_device(opts: &Options) -> Result<(), RunnerError> {
    match (&opts.place, &opts.plan.device) {
        (Where::Provision { .. }, Some(dev)) => {
            crate::provision::safety::check_device(std::path::Path::new(dev), opts.plan.wipe)
                .map_err(|e| RunnerError::Invalid(e.to_string()))
        }
        _ => Ok(()),
    }
}

/// With several ranks, `compare` runs on a directory every rank sees (`dir:`): a target that
/// formats or mounts something would be provisioned by every rank on its own.
pub(super) fn check_ranks(opts: &Options, many: bool) -> Result<(), SpecError> {
    if !many {
        return Ok(());
    }
    // (`run`'s one target is where the job file says: nothing is provisioned.)
    let provisions = matches!(opts.place, Where::Provision { .. });
    if let Some(t) = opts
        .plan
        .targets
        .iter()
        .find(|t| provisions && !crate::provision::caps(&t.fs).existing_dir)
    {
        return Err(SpecError(format!(
            "target '{}' formats or mounts a filesystem: under mpirun every rank would provision its own. Run multi-rank studies on a directory every rank sees: dir:/shared/path (NFS, Lustre, CephFS, BeeGFS, or a local directory for ranks on one node)",
            t.label
        )));
    }
    if provisions && opts.plan.device.is_some() {
        return Err(SpecError(
            "--device formats a device: under mpirun use dir:/shared/path targets".into(),
        ));
    }
    crate::workload::check_ranks(&opts.plan.workloads)
}

/// Every rank agrees on the plan; rank 0's run id and seed become everyone's.
pub(super) fn agree(
    opts: &Options,
    team: &dyn Team,
    manifest: &mut Manifest,
) -> Result<RankCtx, RunnerError> {
    let rank = team.rank();
    let seed = opts
        .plan
        .overrides
        .seed
        .unwrap_or_else(crate::plan::fio::values::fresh_seed);
    let mut ctx = RankCtx {
        rank,
        seed,
        plan: opts.plan.ranks,
    };
    if !rank.many() {
        return Ok(ctx);
    }
    let plan = serde_json::to_string(&opts.plan).unwrap_or_default();
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
    manifest.warnings.push(format!(
        "{} ranks (mpirun): rank 0 on {} owns this study; records carry every rank's figures in `ranks`",
        rank.size,
        team.host()
    ));
    Ok(ctx)
}

/// In `compare`, every workload must be able to run on every target as planned (sizes, options)
/// before the first target is provisioned.
pub(super) fn check_targets(
    opts: &Options,
    workloads: &[(String, Box<dyn Workload>)],
) -> Result<(), SpecError> {
    if !matches!(opts.place, Where::Provision { .. }) {
        return Ok(());
    }
    for t in &opts.plan.targets {
        if let Some(why) = crate::provision::faultdev::refuse(t, opts.plan.device.is_some(), false)
        {
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
        let size = (!crate::provision::caps(&t.fs).existing_dir)
            .then(|| t.size.unwrap_or(opts.plan.size_bytes));
        for (_, w) in workloads {
            w.check_target(t, size)?;
        }
    }
    Ok(())
}
