//! The shape of a job's load: its directions and their mix, the order of its offsets (in turn
//! with holes, at random through the random map or not, by a distribution or a sequence, in
//! runs), its block sizes per direction (trims' too) and alignment, and its queue depth.

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::fio::values::{
    block_size, fresh_seed, parse_bsrange, parse_bssplit, parse_distribution, parse_rw, per_dir,
};
use crate::plan::job::{BlockSize, Distribution, Job};

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Shape, name, help, example, apply)
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("rw", &["readwrite"]),
        "the directions and order (read, randwrite, rw:8k, ...)",
        "randread",
        rw,
    ),
    opt(
        ("rwmixread", &[]),
        "percent of a mixed job's I/Os that read",
        "70",
        |j, a| {
            j.rwmixread = a.u32(0, 100)?;
            Ok(Done)
        },
    ),
    opt(
        ("rwmixwrite", &[]),
        "percent of a mixed job's I/Os that write",
        "30",
        |j, a| {
            j.rwmixread = 100 - a.u32(0, 100)?;
            Ok(Done)
        },
    ),
    opt(
        ("rw_sequencer", &[]),
        "what follows a random offset in a run: sequential or identical",
        "sequential",
        |j, a| {
            j.rw_identical = a.choice(&[("sequential", false), ("identical", true)])?;
            Ok(Done)
        },
    ),
    opt(
        ("percentage_random", &[]),
        "percent of a random job's I/Os that are random",
        "50",
        |j, a| {
            let [r, w] = per_dir(a.need()?, |s| {
                crate::plan::fio::values::parse_u32(a.key, s, 0, 100)
            })?;
            if r.is_some() && w.is_some() && r != w {
                return Err(format!("percentage_random={}: different shares for reads and writes are not supported by fsbench; give one", a.shown()).into());
            }
            j.random_pct = r.or(w).unwrap_or(100);
            Ok(Done)
        },
    ),
    opt(
        ("random_distribution", &[]),
        "where random offsets fall: random, zipf, pareto, normal, zoned, sequence",
        "zipf:1.2",
        distribution,
    ),
    opt(
        ("random_sequence_stride", &[]),
        "a sequence distribution moves on each round (either order with it)",
        "1",
        |j, a| {
            let on = a.bool()?;
            j.seq_stride = on;
            if let Distribution::Sequence { stride, .. } = &mut j.distribution {
                *stride = on;
            }
            Ok(Done)
        },
    ),
    opt(
        ("norandommap", &[]),
        "random offsets drawn independently, not each block once per pass",
        "1",
        |j, a| {
            j.norandommap = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("randrepeat", &["allrandrepeat"]),
        "0: a fresh seed each run",
        "1",
        |j, a| {
            if !a.bool()? && j.randseed.is_none() {
                j.randseed = Some(fresh_seed());
            }
            Ok(Done)
        },
    ),
    opt(
        ("randseed", &[]),
        "the seed of the job's random streams",
        "42",
        |j, a| {
            j.randseed = Some(a.u64()?);
            Ok(Done)
        },
    ),
    opt(
        ("random_generator", &[]),
        "fio's generator (fsbench draws with its own)",
        "lfsr",
        |_, a| {
            match a.need()? {
            "tausworthe" | "lfsr" | "tausworthe64" => Ok(Noted(format!("random_generator={}: fsbench draws offsets with its own generator (every block once per pass with the random map, as fio's); the sequence differs from fio's", a.shown()))),
            o => Err(format!("random_generator={o}: expected tausworthe, lfsr or tausworthe64").into()),
        }
        },
    ),
    opt(
        ("bs", &["blocksize"]),
        "block size per direction (R,W,T)",
        "4k",
        |j, a| {
            let b = a.need()?;
            if b.contains('–') || (b.contains('-') && !b.contains(',')) {
                return Err(format!("{}={b}: a block size range is written bsrange=8k-64k (ASCII hyphen, no spaces)", a.key).into());
            }
            let fixed = |s: &str| block_size(a.key, s).map(BlockSize::Fixed);
            j.trim_bs_from(b, fixed);
            let [r, w] = per_dir(b, fixed)?;
            j.set_bs(r, w);
            Ok(Done)
        },
    ),
    opt(
        ("bsrange", &["blocksize_range"]),
        "block sizes in steps of the smallest (R,W,T)",
        "4k-64k",
        |j, a| {
            j.trim_bs_from(a.need()?, parse_bsrange);
            let [r, w] = per_dir(a.need()?, parse_bsrange)?;
            j.set_bs(r, w);
            Ok(Done)
        },
    ),
    opt(
        ("bssplit", &[]),
        "block sizes with their shares (R,W,T)",
        "4k/50:64k/50",
        |j, a| {
            j.trim_bs_from(a.need()?, parse_bssplit);
            let [r, w] = per_dir(a.need()?, parse_bssplit)?;
            j.set_bs(r, w);
            Ok(Done)
        },
    ),
    opt(
        ("blockalign", &["ba"]),
        "offsets are multiples of this",
        "4k",
        |j, a| {
            let [r, w] = per_dir(a.need()?, |s| block_size(a.key, s))?;
            j.blockalign = r.or(w);
            Ok(Done)
        },
    ),
    opt(("iodepth", &[]), "I/Os in flight at most", "32", |j, a| {
        j.iodepth = a.u32(1, 65536)?;
        Ok(Done)
    }),
];

/// rw=DIR[:N]: a hole of N after each I/O in turn (rw=read:8k), a step back (rw=read:-8k), or
/// N I/Os per random offset (rw=randread:8).
fn rw(j: &mut Job, a: Arg) -> R<Got> {
    let written = a.need()?;
    let (rw, m) = parse_rw(written)?;
    let back = written
        .split_once(':')
        .is_some_and(|(_, m)| m.trim().starts_with('-'));
    if back && rw.random() {
        return Err(format!(
            "rw={written}: a negative modifier (backwards) applies to sequential I/O: rw=read:-8k"
        )
        .into());
    }
    (j.rw, j.rw_mod, j.rw_backwards) = (rw, m, back);
    Ok(Done)
}

/// random_distribution: a distribution and where it centres, or a sequence of blocks (its
/// stride as random_sequence_stride said, before or after).
fn distribution(j: &mut Job, a: Arg) -> R<Got> {
    let v = a.need()?;
    if v.starts_with("sequence") {
        j.distribution = Distribution::Sequence {
            blocks: parse_sequence(v)?,
            stride: j.seq_stride,
        };
        j.dist_center = None;
    } else {
        (j.distribution, j.dist_center) = parse_distribution(v)?;
    }
    Ok(Done)
}

/// fio's sequence distribution, `sequence:2,0,1`: up to 64 block indices.
fn parse_sequence(v: &str) -> R<Vec<u64>> {
    let bad = |why: &str| format!("random_distribution={v}: {why}, e.g. sequence:2,0,1");
    let list = v
        .trim()
        .strip_prefix("sequence:")
        .ok_or_else(|| bad("the sequence's block indices follow 'sequence:'"))?;
    let blocks = list
        .split(',')
        .map(|b| {
            b.trim()
                .parse::<u64>()
                .map_err(|_| bad(&format!("'{b}' is not a block index")))
        })
        .collect::<Result<Vec<u64>, String>>()?;
    if blocks.len() > 64 {
        return Err(bad("at most 64 block indices (fio's limit)").into());
    }
    Ok(blocks)
}

impl Job {
    /// Sets the block sizes of reads and writes from per-direction values.
    fn set_bs(&mut self, read: Option<BlockSize>, write: Option<BlockSize>) {
        let old_write = self.wbs().clone();
        if let Some(r) = read {
            self.bs = r;
        }
        let w = write.unwrap_or(old_write);
        self.write_bs = (w != self.bs).then_some(w);
    }

    /// The trims' block size from bs=, bsrange= or bssplit=: its third value, or the last one
    /// before it ("a value not terminated in a comma applies to subsequent types", fio's
    /// HOWTO). Read before the reads' and writes' sizes, whose parse tells the errors.
    fn trim_bs_from(&mut self, v: &str, parse: impl Fn(&str) -> R<BlockSize>) {
        let parts: Vec<&str> = v.split(',').map(str::trim).collect();
        let last = match parts.len() {
            1 | 2 => parts[parts.len() - 1],
            _ => parts[2],
        };
        let write = parts.get(1).unwrap_or(&parts[0]);
        if !last.is_empty() && last == *write {
            // The writes' size (None says so).
            self.trim_bs = None;
        } else if !last.is_empty() {
            if let Ok(bs) = parse(last) {
                self.trim_bs = Some(bs);
            }
        }
    }
}
