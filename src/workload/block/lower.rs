//! A job lowered once into the I/O loop's typed parts (`io::WorkerPlan`): the only place that
//! reads a job's options for the loop. Each part from its options: where I/Os go and in which
//! order, what is issued (the mix, sizes, flags, syncs), what holds I/Os back, what writes carry,
//! what records them, which errors are gone past, and when the worker ends. The parts that need
//! the run (a trace read, a flow shared, a verify state, a dedupe working set) are added by
//! `resolve` after.

use std::time::Duration;

use super::Origin;
use crate::engine::SyncKind;
use crate::io::data::{ring_buffers, RING_STAMP_EVERY};
use crate::io::files::{Files, PassEnds, Region, Walk};
use crate::io::iolog::Replay;
use crate::io::offsets::{AtEnd, Draw, Order, Run, RunNext, Step, Stride};
use crate::io::pace::{Arrivals, Rate, Think};
use crate::io::worker::{
    Atomic, BadBlock, Data, Ends, FillPlan, Fresh, GatePlan, Marks, Mix, OnError, Ops, Overlap,
    Queue, SinkPlan, Source, Syncs, Timing, WhenFull, WorkerPlan, Written,
};
use crate::plan::dir::{Dir, PerDir};
use crate::plan::job::{BlockSize, Distribution, EngineKind, Failing, Job, Rw};

/// Where a worker's I/O falls on its target: its region in each of its files, and the bytes it
/// does over them all.
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    pub base: u64,
    pub region: u64,
    pub total: u64,
}

/// Worker `clone` of `job` (of rank `rank`), placed.
pub fn plan(job: &Job, (clone, rank): (u32, usize), at: Placed, origin: Origin) -> WorkerPlan {
    let rw = rw_of(job);
    let ends = ends(job, at.total);
    let ops = ops(job, rw);
    let mut plan = WorkerPlan {
        // Each rank its own stream (rank 0's is a single process's).
        seed: seed_of(&job.name, clone)
            ^ job.randseed.unwrap_or(0)
            ^ (rank as u64).wrapping_mul(0xA24B_AED4_963E_E407),
        queue: Queue {
            depth: job.iodepth.max(1) as usize,
            slots: job.iodepth.max(1) as usize,
        },
        source: Source::Walk(Box::new(Walk {
            region: Region {
                base: at.base,
                len: at.region,
                align: 1,
            },
            order: Order::InTurn {
                step: Step::Forward { hole: 0 },
                at_end: AtEnd::Stop,
            },
            files: Files {
                count: job.files_per_worker(),
                service: job.file_service,
                // Each file its share of the job's bytes (fio's io_size over its files).
                share: ends
                    .bytes
                    .filter(|_| job.files_per_worker() > 1)
                    .map(|l| l.div_ceil(job.files_per_worker() as u64)),
            },
            zones: None,
            pass_ends: PassEnds::Nothing,
        })),
        ops,
        gates: gates(job),
        fill: fill(job, rw),
        sinks: sinks(job, rw),
        on_error: on_error(job),
        ends,
    };
    let walk = walk(job, rw, &plan, at);
    plan.source = Source::Walk(Box::new(Walk {
        pass_ends: pass_ends(job, rw, &plan, (at.region, origin)),
        ..walk
    }));
    ring(job, rw, &mut plan);
    plan
}

/// The job's direction as it runs: verify_only reads what an earlier run wrote.
fn rw_of(job: &Job) -> Rw {
    match job.verify.as_ref().is_some_and(|v| v.only) {
        true if job.rw.random() => Rw::RandRead,
        true => Rw::Read,
        false => job.rw,
    }
}

fn seed_of(name: &str, clone: u32) -> u64 {
    // FNV-1a of the job name, so every job and worker has its own reproducible stream.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (clone as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The mix, each direction's block size (trims take the writes' unless the job gives its
/// own), the flags each I/O carries and the syncs between them.
fn ops(job: &Job, rw: Rw) -> Ops {
    let mix = match rw {
        Rw::Read | Rw::RandRead => Mix::Only(Dir::Read),
        Rw::Write | Rw::RandWrite => Mix::Only(Dir::Write),
        Rw::Trim | Rw::RandTrim => Mix::Only(Dir::Trim),
        Rw::TrimWrite | Rw::RandTrimWrite => Mix::TrimThenWrite,
        Rw::Rw | Rw::RandRw => Mix::Mixed {
            read_pct: job.rwmixread,
        },
    };
    let write = job.wbs().clone();
    let trim = job.trim_bs.clone().filter(|_| rw.trims());
    let io = &job.issue;
    Ops {
        mix,
        bs: PerDir::new(|d| match d {
            Dir::Read => job.bs.clone(),
            Dir::Write => write.clone(),
            Dir::Trim => trim.clone().unwrap_or_else(|| write.clone()),
        }),
        syncs: Syncs {
            fsync_every: job.fsync,
            fdatasync_every: job.fdatasync,
            at_end: job.end_fsync.then_some(SyncKind::Fsync),
        },
        marks: Marks {
            thread: io.ioprio(),
            per_io: Some(io.cmdprio.clone()).filter(|c| !c.is_off()),
            atomic: if io.atomic {
                Atomic::Writes
            } else {
                Atomic::No
            },
        },
    }
}

/// Where the I/Os go: the region, the order of offsets in it (and in a strided zone), the files.
fn walk(job: &Job, rw: Rw, plan: &WorkerPlan, at: Placed) -> Walk {
    let Source::Walk(w) = &plan.source else {
        unreachable!("a worker is lowered onto a walk")
    };
    let align = job.blockalign.unwrap_or_else(|| plan.min_bs()).max(1);
    let zones = job.strided.then(|| {
        let z = job.zones.resolved();
        (z, order(job, rw, plan, z.range))
    });
    Walk {
        region: Region { align, ..w.region },
        order: order(job, rw, plan, at.region),
        zones,
        ..(**w).clone()
    }
}

/// The order of offsets in `region` bytes.
fn order(job: &Job, rw: Rw, plan: &WorkerPlan, region: u64) -> Order {
    if !rw.random() {
        let hole = job.rw_mod.unwrap_or(0);
        let ends = &plan.ends;
        let wraps = ends.runtime.is_some() || ends.bytes.is_none_or(|l| l > region);
        return Order::InTurn {
            step: match job.rw_backwards {
                true => Step::Back { by: hole },
                false => Step::Forward { hole },
            },
            at_end: if wraps { AtEnd::Wrap } else { AtEnd::Stop },
        };
    }
    let draw = match &job.distribution {
        Distribution::Sequence { blocks, stride } if !blocks.is_empty() => Draw::Sequence {
            blocks: blocks.clone(),
            stride: if *stride { Stride::On } else { Stride::Repeat },
        },
        Distribution::Random | Distribution::Sequence { .. } if job.norandommap => {
            Draw::Independent
        }
        Distribution::Random | Distribution::Sequence { .. } if cuts(job, rw) => Draw::MapCut,
        Distribution::Random | Distribution::Sequence { .. } => Draw::Map,
        d => Draw::Skewed(d.clone(), job.dist_center),
    };
    Order::Random {
        draw,
        random_pct: job.random_pct,
        run: Run {
            len: job.rw_mod.unwrap_or(1).max(1),
            then: if job.rw_identical {
                RunNext::Identical
            } else {
                RunNext::Sequential
            },
        },
    }
}

/// Does fio's random map cut this job's I/Os? When reads and writes share one spread of sizes
/// (bsrange, bssplit) smaller than its largest: fio marks and cuts in units of each direction's
/// smallest size, so a direction of one size (bs=4k,64k) or trims of their own never are.
fn cuts(job: &Job, rw: Rw) -> bool {
    let spread = match &job.bs {
        BlockSize::Fixed(_) => false,
        BlockSize::Range(lo, hi) => lo < hi,
        BlockSize::Split(v) => v.iter().any(|x| x.0 != v[0].0),
    };
    spread && job.write_bs.is_none() && !rw.trims()
}

/// Whether fio drops a file's cached pages when a pass over it ends (io_u.c's
/// loop_cache_invalidate): a job file's job with invalidate whose in-turn direction is back at
/// the start of a time-based job's only file (or a writing job asked for more bytes than the
/// file), or a time-based random job's random map full; and with `loops`, at each loop (fio
/// opens the files again).
fn pass_ends(job: &Job, rw: Rw, plan: &WorkerPlan, (region, origin): (u64, Origin)) -> PassEnds {
    if origin != Origin::JobFile || !job.invalidate {
        return PassEnds::Nothing;
    }
    // A time-based job has no byte limit (its runtime ends it).
    let limit = plan.ends.bytes;
    let time_based = limit.is_none();
    let passes = if rw.random() {
        time_based
    } else {
        let more = limit.is_some_and(|l| l > region) && rw.writes();
        time_based && job.files_per_worker() <= 1 || more
    };
    match passes || job.loops > 1 {
        true => PassEnds::DropPages,
        false => PassEnds::Nothing,
    }
}

/// What holds I/Os back: the start delay, rates, pauses, the latency target, overlaps (the
/// flow is joined by `resolve`, which sees every job).
fn gates(job: &Job) -> GatePlan {
    let limited = job.rate.iter().chain(&job.rate_iops).any(Option::is_some);
    GatePlan {
        start_delay: job.startdelay.unwrap_or_default(),
        rate: limited.then(|| Rate {
            bytes: PerDir::rw(job.rate[0], job.rate[1]),
            ios: PerDir::rw(job.rate_iops[0], job.rate_iops[1]),
            arrivals: if job.rate_poisson {
                Arrivals::Poisson
            } else {
                Arrivals::Even
            },
        }),
        think: job.thinktime.map(|total| Think {
            total,
            spin: job.thinktime_spin.unwrap_or_default(),
            every: job.thinktime_blocks,
        }),
        flow: None,
        latency: job.issue.latency.clone(),
        overlap: if job.issue.serialize_overlap {
            Overlap::Serialized
        } else {
            Overlap::Allowed
        },
    }
}

/// What writes carry: the job's pattern, a deduped share (none when verifying), fresh data,
/// and the verify header.
fn fill(job: &Job, rw: Rw) -> FillPlan {
    let fresh = match job.refill_buffers {
        Some(false) => Fresh::Scramble { every: 512 },
        _ => Fresh::Refill,
    };
    let dedupe = if job.verify.is_some() {
        0
    } else {
        job.dedupe_pct
    };
    FillPlan {
        data: if !job.buffer_pattern.is_empty() {
            Data::Pattern(job.buffer_pattern.clone())
        } else if dedupe > 0 {
            Data::Dedupe {
                pct: dedupe,
                set: None,
                fresh,
            }
        } else {
            Data::Fresh(fresh)
        },
        compress_pct: job.compress_pct,
        stamp: job.verify.clone().filter(|_| rw.writes()),
    }
}

/// What records the I/O: fio's logs, submission and completion timed apart where the engine
/// is asynchronous and the job asks, the writes kept for a read back or a verify state, the
/// reads of a verifying reader checked.
fn sinks(job: &Job, rw: Rw) -> SinkPlan {
    let checks = job.verify.as_ref().filter(|v| v.kind != "null");
    let async_engine = matches!(job.engine, EngineKind::IoUring | EngineKind::Libaio);
    let lat_log = job.logs.as_ref().is_some_and(|l| l.lat.is_some());
    let keep = rw.writes() && (job.verify_state_save || checks.is_some_and(|v| v.after_write));
    SinkPlan {
        logs: job.logs.clone().filter(|l| l.any()),
        record: None,
        timing: match async_engine && (job.split_lat || lat_log) {
            true => Timing::Split,
            false => Timing::Whole,
        },
        written: if keep { Written::Keep } else { Written::Forget },
        checks: checks
            .filter(|_| !rw.writes())
            .map(|v| crate::io::worker::ReadChecks {
                verify: v.clone(),
                ranges: None,
            }),
    }
}

/// The errors gone past: with continue_on_error for a direction, those ignore_error lists (by
/// default fio's non-fatal EIO and EILSEQ); a full filesystem ends a filling job.
fn on_error(job: &Job) -> OnError {
    let listed = |i: usize| match &job.ignore_error[i] {
        l if l.is_empty() => vec![libc::EIO, libc::EILSEQ],
        l => l.clone(),
    };
    let on = |k: Failing| job.continue_on_error.contains(k);
    let read = if on(Failing::Read) {
        listed(0)
    } else {
        Vec::new()
    };
    let write = if on(Failing::Write) {
        listed(1)
    } else {
        Vec::new()
    };
    OnError {
        go_past: PerDir::rw(read, write),
        when_full: if job.fill_device {
            WhenFull::Ends
        } else {
            WhenFull::Fails
        },
        bad_block: match job.verify.as_ref().is_some_and(|v| v.fatal) {
            true => BadBlock::Stops,
            false => BadBlock::GoesOn,
        },
    }
}

/// When the worker ends: a time-based job by its runtime alone, else after its bytes (io_size
/// or one pass over its files, times loops) or number_ios.
fn ends(job: &Job, total: u64) -> Ends {
    let passes = job
        .io_size
        .unwrap_or(total)
        .saturating_mul(job.loops.max(1) as u64);
    Ends {
        bytes: (!job.time_based).then_some(passes),
        ios: job.number_ios,
        runtime: job.runtime,
        ramp: job.ramp_time.unwrap_or(Duration::ZERO),
    }
}

/// Unique, incompressible data for large writes at the cost of a stamp per 4 KiB: a ring of
/// random buffers (`io::data::ring_buffers`) instead of regenerating each one in full; not with
/// compressible data (its zeros at the head of each 4 KiB would cover the stamps), nor with a
/// pattern (the job asked for those bytes).
fn ring(job: &Job, rw: Rw, plan: &mut WorkerPlan) {
    let only_writes = matches!(rw, Rw::Write | Rw::RandWrite);
    let plain = plan.fill.stamp.is_none()
        && job.verify.is_none()
        && plan.fill.compress_pct == 0
        && matches!(plan.fill.data, Data::Fresh(_));
    if job.refill_buffers.is_none() && only_writes && plain {
        if let Some(n) = ring_buffers(plan.max_bs(), plan.queue.depth) {
            plan.fill.data = Data::Fresh(Fresh::Scramble {
                every: RING_STAMP_EVERY,
            });
            plan.queue.slots = n;
        }
    }
}

/// A replaying worker: the trace's operations in place of the job's mix, sizes and offsets,
/// its largest I/O as every buffer's size, nothing but the trace (and the runtime) to end it,
/// no rate or pause; it reads, and writes where the trace does.
pub fn replaying(job: &Job, mut plan: WorkerPlan, r: std::sync::Arc<Replay>) -> WorkerPlan {
    let largest = r.ops.iter().map(|o| o.len).max().unwrap_or(4096);
    plan.ops.bs = PerDir::new(|_| BlockSize::Fixed(largest));
    (plan.ends.bytes, plan.ends.ios) = (None, None);
    plan.gates = GatePlan {
        flow: plan.gates.flow.take(),
        latency: plan.gates.latency.take(),
        overlap: plan.gates.overlap,
        ..GatePlan::default()
    };
    let rw = if r.writes() { Rw::RandRw } else { Rw::RandRead };
    plan.sinks = SinkPlan {
        record: plan.sinks.record.take(),
        ..sinks(job, rw)
    };
    plan.fill.stamp = job.verify.clone().filter(|_| rw.writes());
    plan.source = Source::Replay(r);
    plan
}

#[cfg(test)]
mod tests;
