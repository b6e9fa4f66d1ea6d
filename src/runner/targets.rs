//! Getting a target to run on: provisioned (compare) or here (run), as one `Got` with the frame's
//! view of it and, when provisioned, the guard that tears it down.

use std::path::PathBuf;
use std::time::Instant;

use super::Where;
use crate::frame::{Place, RankCtx, TargetCtx};
use crate::plan::{Plan, TargetInfo, TargetSpec};
use crate::provision::exec::Sys;
use crate::provision::{self, Mounted, ProvisionError, Request};
use crate::ranks::Team;
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
            run_id: self.run_id,
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

/// What rank 0 tells the other ranks about a target it provisioned (a `dir:` target's scratch
/// directory), or why there is none.
#[derive(serde::Serialize, serde::Deserialize)]
enum Told {
    Here {
        path: PathBuf,
        fs: String,
    },
    Missed {
        refused: Option<String>,
        unsupported: Option<String>,
    },
}

impl Getter<'_> {
    /// With several ranks: rank 0 provisions the target and tells the others where it is; they
    /// work in the same directory and never provision or tear down (rank 0 does, after the last
    /// rank is done).
    pub fn get_shared(
        &self,
        team: &dyn Team,
        spec: &TargetSpec,
        index: usize,
        repeat: u32,
    ) -> Result<Result<Got, Box<Missed>>, crate::frame::RunError> {
        let what = format!("the provisioning of {}", spec.label);
        if team.rank().leads() {
            let got = self.get(spec, index, repeat);
            let told = match &got {
                Ok(g) => Told::Here {
                    path: g.ctx.dir().map(PathBuf::from).unwrap_or_default(),
                    fs: g.fs.clone(),
                },
                Err(m) => Told::Missed {
                    refused: m.refused.clone(),
                    unsupported: m.unsupported.clone(),
                },
            };
            team.announce(&what, Some(serde_json::to_string(&told).expect("json")))?;
            return Ok(got);
        }
        let text = team.announce(&what, None)?;
        let told: Told = serde_json::from_str(&text).map_err(|e| {
            crate::frame::RunError::Ranks(format!(
                "rank 0's word on {} does not read: {e}",
                spec.label
            ))
        })?;
        Ok(match told {
            Told::Here { path, fs } => Ok(Got {
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
                    ranks: self.ranks,
                    interval: self.plan.overrides.interval(),
                    profile: self.plan.overrides.profile,
                },
                mounted: None,
            }),
            Told::Missed {
                refused,
                unsupported,
            } => Err(Box::new(Missed {
                record: missed(
                    spec,
                    repeat,
                    ProvisionError::Unsupported("rank 0 could not provide it".into()),
                    Instant::now(),
                )
                .record,
                refused,
                unsupported,
            })),
        })
    }
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
