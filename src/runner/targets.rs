//! Getting a target to run on: provisioned (compare) or here (run), as one `Got` with the frame's
//! view of it and, when provisioned, the guard that tears it down.

use std::path::PathBuf;
use std::time::Instant;

use super::Where;
use crate::frame::{Place, Rank, RankCtx, RunError, TargetCtx};
use crate::plan::{Plan, TargetInfo, TargetSpec};
use crate::provision::exec::Sys;
use crate::provision::{self, Mounted, ProvisionError, Request};
use crate::ranks::{Nodes, Team};
use crate::store::{Outcome, Record, RecordKey};

/// A target ready for workloads.
pub struct Got {
    pub label: String,
    pub fs: String,
    pub ctx: TargetCtx,
    pub mounted: Option<Mounted>,
}

/// A target that could not be had: its record, and whether the whole study must stop.
pub struct Missed {
    pub record: Record,
    /// Some(why) when a guard refused the device: nothing may be formatted after it.
    pub refused: Option<String>,
    /// Some(why) when this host cannot provide it: the (target, repeat) counts as done.
    pub unsupported: Option<String>,
}

pub struct Getter<'a> {
    pub sys: &'a Sys,
    pub run_id: &'a str,
    pub plan: &'a Plan,
    pub place: &'a Where,
    pub quiet: bool,
    pub ranks: RankCtx,
}

/// The frame's view of `run`'s one target, "here"; None when targets are provisioned.
pub fn here_ctx(place: &Where, quiet: bool, ranks: RankCtx) -> Option<TargetCtx> {
    match place {
        Where::Here {
            fs,
            device,
            dir,
            wipe,
        } => Some(TargetCtx {
            place: Place::Here { wipe: *wipe },
            fs: fs.clone(),
            device: device.clone(),
            stat_dir: Some(dir.clone()),
            caps: provision::caps_of_mounted(fs),
            target: None,
            quiet,
            ranks,
            interval: crate::metrics::timeline::DEFAULT,
            profile: None,
        }),
        Where::Provision { .. } => None,
    }
}

impl Getter<'_> {
    /// The target `spec` for repeat `repeat` (index `index` in the plan).
    pub fn get(&self, spec: &TargetSpec, index: usize, repeat: u32) -> Result<Got, Box<Missed>> {
        self.provide(spec, index, repeat, self.run_id)
    }

    /// `get`, the names of what it makes carrying `run_id`.
    fn provide(
        &self,
        spec: &TargetSpec,
        index: usize,
        repeat: u32,
        run_id: &str,
    ) -> Result<Got, Box<Missed>> {
        let (workdir, keep) = match self.place {
            Where::Provision { workdir, keep } => (workdir, *keep),
            Where::Here { .. } => {
                let mut ctx = here_ctx(self.place, self.quiet, self.ranks).expect("a here target");
                ctx.interval = self.plan.overrides.interval();
                ctx.profile = self.plan.overrides.profile;
                return Ok(Got {
                    label: spec.label.clone(),
                    fs: ctx.fs.clone(),
                    ctx,
                    mounted: None,
                });
            }
        };
        if !self.quiet {
            crate::out::eline!("fsbench: [{}] provisioning {}", spec.label, spec.spec);
        }
        let device = self.plan.device.as_ref().map(PathBuf::from);
        let req = Request {
            workdir,
            run_id,
            index: index + repeat as usize * self.plan.targets.len(),
            size: self.plan.size_bytes,
            device: device.as_deref(),
            wipe: self.plan.wipe,
            keep_image: keep,
            persistent: false,
        };
        let t0 = Instant::now();
        match provision::provision(self.sys, spec, &req) {
            Ok(m) => {
                // The room it has before anything is written: the next plan's judgement.
                let image = device.is_none() && provision::caps(&spec.fs).formats;
                if let (true, Ok(st)) = (image, crate::sys::statvfs(&m.mountpoint)) {
                    let size = spec.size.unwrap_or(self.plan.size_bytes);
                    provision::room::remember(workdir, spec, size, st.blocks_avail * st.block_size);
                }
                Ok(self.got(spec, m))
            }
            Err(e) => Err(Box::new(missed(spec, repeat, e, t0))),
        }
    }

    fn got(&self, spec: &TargetSpec, m: Mounted) -> Got {
        let caps = provision::caps(&spec.fs);
        if !self.quiet {
            crate::out::eline!(
                "fsbench: [{}] {} {} ({})",
                spec.label,
                if caps.raw_device || m.info.mountpoint.is_empty() {
                    "using the device"
                } else {
                    "mounted on"
                },
                m.mountpoint.display(),
                m.info.backing
            );
        }
        let fs = m.info.fs.clone();
        let device: Option<PathBuf> = m.info.device.as_ref().map(PathBuf::from);
        // A raw device or a zvol: the target is the device itself.
        let place = match &device {
            Some(d) if caps.raw_device || *d == m.mountpoint => Place::Raw(d.clone()),
            _ => Place::Mount(m.mountpoint.clone()),
        };
        Got {
            label: spec.label.clone(),
            fs: fs.clone(),
            ctx: TargetCtx {
                stat_dir: matches!(place, Place::Mount(_)).then(|| m.mountpoint.clone()),
                place,
                fs,
                device,
                caps,
                target: Some(std::sync::Arc::new(m.handle(spec))),
                quiet: self.quiet,
                ranks: self.ranks,
                interval: self.plan.overrides.interval(),
                profile: self.plan.overrides.profile,
            },
            mounted: Some(m),
        }
    }
}

/// Who provisions a target when several ranks run: rank 0 for all, or each node for its own
/// ranks. The filesystem's capabilities decide: a directory of the user's is one every rank
/// sees (NFS, Lustre, CephFS); what is formatted or mounted lives on a node's own disks or
/// memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Rank 0 makes the scratch directory; every rank works in it.
    First,
    /// The first rank of each node provisions the node's target; the node's ranks work on it.
    EachNode,
}

impl Provider {
    pub fn of(spec: &TargetSpec) -> Provider {
        match provision::caps(&spec.fs).existing_dir {
            true => Provider::First,
            false => Provider::EachNode,
        }
    }

    /// The rank that provisions what `rank` works on.
    fn source(self, nodes: &Nodes, rank: usize) -> usize {
        match self {
            Provider::First => 0,
            Provider::EachNode => nodes.leader_of(rank),
        }
    }

    /// `rank` among the ranks that share its target, as its workloads see it (the files a rank
    /// reads back, the segment of a shared file are among them).
    fn sharers(self, nodes: &Nodes, rank: Rank) -> Rank {
        match self {
            Provider::First => rank,
            Provider::EachNode => nodes.within(rank.index),
        }
    }

    /// The run id in the names of what `rank`'s provider makes: a node's carry its number
    /// (`RUNID-nK`), so that nodes on one kernel never take the same names.
    fn run_id(self, run_id: &str, nodes: &Nodes, rank: usize) -> String {
        match self {
            Provider::First => run_id.to_string(),
            Provider::EachNode => format!("{run_id}-n{}", nodes.node_of(rank)),
        }
    }

    /// Whose word a provider's failure is: the node's when there are several.
    fn whose(self, nodes: &Nodes, rank: usize) -> String {
        match self {
            Provider::EachNode if nodes.count() > 1 => {
                format!("{}: ", nodes.said(nodes.node_of(rank)))
            }
            _ => String::new(),
        }
    }
}

/// What a provider tells the other ranks about the target it provisioned, or why there is none.
#[derive(serde::Serialize, serde::Deserialize)]
enum Told {
    Here {
        path: PathBuf,
        fs: String,
    },
    Missed {
        record: Box<Record>,
        refused: Option<String>,
        unsupported: Option<String>,
    },
}

impl Told {
    fn of(got: &Result<Got, Box<Missed>>) -> Told {
        match got {
            Ok(g) => Told::Here {
                path: g.ctx.dir().map(PathBuf::from).unwrap_or_default(),
                fs: g.fs.clone(),
            },
            Err(m) => Told::Missed {
                record: Box::new(m.record.clone()),
                refused: m.refused.clone(),
                unsupported: m.unsupported.clone(),
            },
        }
    }
}

impl Getter<'_> {
    /// With several ranks: each target's providers (`Provider`) provision it and every rank
    /// hears from all of them; a rank works where its provider says, and only providers tear
    /// down (after the last rank is done). When any provider could not, no rank runs the target
    /// and every provider tears its own down at once.
    pub fn get_ranked(
        &self,
        team: &dyn Team,
        spec: &TargetSpec,
        index: usize,
        repeat: u32,
    ) -> Result<Result<Got, Box<Missed>>, RunError> {
        let provider = Provider::of(spec);
        let nodes = team.nodes();
        let me = team.rank();
        let source = provider.source(&nodes, me.index);
        let mine = (source == me.index).then(|| {
            let run_id = provider.run_id(self.run_id, &nodes, me.index);
            self.provide(spec, index, repeat, &run_id)
        });
        let text = mine
            .as_ref()
            .map(|g| serde_json::to_string(&Told::of(g)).expect("json"));
        let what = format!("the provisioning of {}", spec.label);
        let mut all = Vec::new();
        for (r, t) in team.exchange(&what, text)?.into_iter().enumerate() {
            let told: Option<Told> =
                t.map(|t| serde_json::from_str(&t))
                    .transpose()
                    .map_err(|e| {
                        RunError::Ranks(format!(
                            "rank {r}'s word on {} does not read: {e}",
                            spec.label
                        ))
                    })?;
            all.push(told);
        }
        let failed = all
            .iter_mut()
            .enumerate()
            .find_map(|(r, t)| match t.take() {
                Some(Told::Missed {
                    record,
                    refused,
                    unsupported,
                }) => Some((r, *record, refused, unsupported)),
                other => {
                    *t = other;
                    None
                }
            });
        if let Some((r, mut record, refused, unsupported)) = failed {
            let whose = provider.whose(&nodes, r);
            if !self.quiet && !whose.is_empty() {
                crate::out::eline!(
                    "fsbench: [{}] {whose}could not provision it: no node runs it, each tears its own down",
                    spec.label
                );
            }
            if let Some(Ok(g)) = mine {
                let (_, warning) = release(g, self.sys);
                if let Some(w) = warning {
                    crate::out::eline!("fsbench: warning: {w}");
                }
            }
            let say = |t: Option<String>| t.map(|t| format!("{whose}{t}"));
            record.error = say(record.error.take());
            record.reason = say(record.reason.take());
            return Ok(Err(Box::new(Missed {
                record,
                refused: say(refused),
                unsupported: say(unsupported),
            })));
        }
        let sharers = provider.sharers(&nodes, me);
        if let Some(Ok(mut g)) = mine {
            g.ctx.ranks.rank = sharers;
            return Ok(Ok(g));
        }
        let Some(Some(Told::Here { path, fs })) = all.into_iter().nth(source) else {
            return Err(RunError::Ranks(format!(
                "rank {source} said nothing of {}: the ranks are out of step",
                spec.label
            )));
        };
        let mut ranks = self.ranks;
        ranks.rank = sharers;
        Ok(Ok(Got {
            label: spec.label.clone(),
            fs: fs.clone(),
            ctx: TargetCtx {
                place: Place::Mount(path.clone()),
                fs,
                device: None,
                stat_dir: Some(path),
                caps: provision::caps(&spec.fs),
                target: None,
                quiet: self.quiet,
                ranks,
                interval: self.plan.overrides.interval(),
                profile: self.plan.overrides.profile,
            },
            mounted: None,
        }))
    }
}

/// After a target's teardown with several ranks: every provider's target and teardown warning,
/// for rank 0's manifest (the others get theirs back).
pub fn released_everywhere(
    team: &dyn Team,
    label: &str,
    info: Option<TargetInfo>,
    warning: Option<String>,
) -> Result<(Vec<TargetInfo>, Vec<String>), RunError> {
    let mine = (info.is_some() || warning.is_some())
        .then(|| serde_json::to_string(&(info, warning)).expect("json"));
    let nodes = team.nodes();
    let mut infos = Vec::new();
    let mut warnings = Vec::new();
    for (r, t) in team
        .exchange(&format!("the teardown of {label}"), mine)?
        .into_iter()
        .enumerate()
    {
        let Some(t) = t else { continue };
        let (info, warning): (Option<TargetInfo>, Option<String>) = serde_json::from_str(&t)
            .map_err(|e| RunError::Ranks(format!("rank {r}'s teardown does not read: {e}")))?;
        infos.extend(info);
        warnings.extend(warning.map(|w| match nodes.count() {
            1 => w,
            _ => format!("{}: {w}", nodes.said(nodes.node_of(r))),
        }));
    }
    Ok((infos, warnings))
}

fn missed(spec: &TargetSpec, repeat: u32, e: ProvisionError, t0: Instant) -> Missed {
    let key = RecordKey {
        target: &spec.label,
        fs: &spec.fs,
        workload: crate::store::PROVISION,
        repeat,
    };
    // A target the host cannot provide or a guard refuses is skipped; anything else failed.
    let (skipped, error) = match &e {
        ProvisionError::Unsupported(why) | ProvisionError::Refused(why) => {
            (Some(why.clone()), None)
        }
        ProvisionError::Failed(err) => (None, Some(err.clone())),
        ProvisionError::Stopped(why) => (None, Some(why.to_string())),
    };
    let record = Record::from_phase(
        &key,
        crate::frame::Phase {
            test: "provision".into(),
            duration_s: t0.elapsed().as_secs_f64(),
            skipped,
            error,
            ..Default::default()
        },
    );
    let what = match record.outcome {
        Outcome::Skipped => "skipped",
        _ => "failed",
    };
    crate::out::eline!("fsbench: [{}] {what}: {e}", spec.label);
    Missed {
        record,
        refused: matches!(&e, ProvisionError::Refused(_)).then(|| e.to_string()),
        unsupported: matches!(&e, ProvisionError::Unsupported(_)).then(|| e.to_string()),
    }
}

/// Tears a provisioned target down; returns what the manifest keeps and a warning if it failed.
pub fn release(got: Got, sys: &Sys) -> (Option<TargetInfo>, Option<String>) {
    let Some(m) = got.mounted else {
        return (None, None);
    };
    let mut info = m.info.clone();
    let warning = m
        .teardown()
        .err()
        .map(|e| format!("{}: teardown: {e}", got.label));
    info.commands.extend(sys.take_log());
    (Some(info), warning)
}
