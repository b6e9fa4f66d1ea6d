//! `fsbench check NEW --against OLD | --against-history N`: the regression gate (the rule is
//! `report::gate`). Exit 0 when nothing regressed, 1 when something did, 2 on bad input.

use std::collections::BTreeMap;
use std::path::Path;

use super::Exit;
use crate::cli::CheckArgs;
use crate::history::{self, Db, Point};
use crate::report::gate::{self, Gate, Key, LeftOut, Pair, Sides};
use crate::store::{self, Manifest, Record};

/// A study read whole, or a message naming it and what to give instead.
fn study(dir: &Path, role: &str) -> anyhow::Result<(Manifest, Vec<Record>)> {
    let m = store::read_manifest(dir).map_err(|e| {
        anyhow::anyhow!("{role} {}: not a study ({e}): give the directory a compare, study, audit, tune or run wrote (it holds manifest.json and results.jsonl)", dir.display())
    })?;
    let r = store::load_results(dir).map_err(|e| {
        anyhow::anyhow!(
            "{role} {}: its results do not read ({e}): give the directory of a study",
            dir.display()
        )
    })?;
    Ok((m, r))
}

/// A figure's points in the history, other than NEW's own (cached per target, workload and
/// metric).
struct Past<'a> {
    db: &'a Db,
    new_run: String,
    cache: BTreeMap<(String, String, String), BTreeMap<String, Vec<Point>>>,
}

impl Past<'_> {
    fn points(&mut self, k: &Key) -> anyhow::Result<Vec<Point>> {
        let ck = (k.target.clone(), k.workload.clone(), k.metric.clone());
        if !self.cache.contains_key(&ck) {
            let s = self.db.series(&k.target, &k.workload, &k.metric)?;
            self.cache.insert(ck.clone(), s);
        }
        Ok(self.cache[&ck]
            .get(&k.test)
            .map(|v| {
                v.iter()
                    .filter(|p| p.run_id != self.new_run)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }
}

pub fn run(a: CheckArgs) -> anyhow::Result<Exit> {
    let (new_m, new_r) = study(&a.new, "NEW")?;
    let new_figs = gate::figures(&new_r, &new_m.plan.workloads);
    if new_figs.is_empty() {
        anyhow::bail!("NEW {}: the study has no headline figure that ran whole (iops, files_per_sec, seeks_per_sec, bytes_per_sec): check a study that measured something", a.new.display());
    }
    let path = super::history::path_of(&a.where_);
    let db = match (&path, a.against_history) {
        (None, Some(_)) => anyhow::bail!(
            "--against-history reads the history, and --no-history turns it off: drop --no-history"
        ),
        (Some(p), Some(_)) => Some(Db::open_read(p)?),
        // Against a study, the history only lends its spread: without one, no spread.
        (Some(p), None) if std::fs::symlink_metadata(p).is_ok() => match Db::open_read(p) {
            Ok(db) => Some(db),
            Err(e) => {
                crate::out::eline!("fsbench: warning: the history's spread is not used: {e}");
                None
            }
        },
        _ => None,
    };
    let mut past = db.as_ref().map(|db| Past {
        db,
        new_run: new_m.run_id.clone(),
        cache: BTreeMap::new(),
    });
    let new_name = a.new.display().to_string();
    let mut side = if let Some(old) = &a.against {
        against_study(&a.new, &new_figs, old)?
    } else if let Some(n) = a.against_history {
        let past = past.as_mut().expect("opened for --against-history");
        against_history(&a.new, &new_m, &new_figs, past, n)?
    } else {
        anyhow::bail!("fsbench check {}: give --against OLD (a study directory) or --against-history N (the last N studies in the history)", a.new.display());
    };
    let new_limits = gate::limits(&new_r, &new_m.plan.workloads);
    for p in side.pairs.iter_mut() {
        p.limits.new = new_limits.get(&p.key).copied();
    }
    // One repeat on a side: the history's spread of the figure on NEW's fingerprint.
    if let Some(past) = past.as_mut() {
        for p in side
            .pairs
            .iter_mut()
            .filter(|p| p.new.len() < 2 || p.old.len() < 2)
        {
            let want = history::digest(&history::fingerprint(&new_m, &p.key.target));
            let pts = past.points(&p.key)?;
            let alike: Vec<&Point> = pts.iter().filter(|x| x.fp_hash == want).collect();
            p.history_spread = history::spread(&alike);
        }
    }
    let mut g = Gate::new(&new_name, &side.name, &side.pairs, a.tolerance);
    g.differences = match &side.old_m {
        Some(old_m) => differences(&side.pairs, |t| history::fingerprint(old_m, t), &new_m),
        None => differences(
            &side.pairs,
            |t| side.last_fp.get(t).cloned().unwrap_or_default(),
            &new_m,
        ),
    };
    g.left_out = side.left_out;
    g.incomplete = gate::incomplete("NEW", &new_name, &new_m, &new_r, &new_figs);
    g.incomplete.append(&mut side.incomplete);
    crate::out::print(&match a.format.as_str() {
        "json" => g.json(),
        "junit" => g.junit(),
        _ => g.text(),
    });
    Ok(if g.regressed().next().is_some() {
        Exit::CheckFailed
    } else {
        Exit::Ok
    })
}

/// Fingerprint fields that differ: (target, field, old, new).
type Diffs = Vec<(String, String, String, String)>;

/// What NEW is checked against: the pairs of figures, what either side alone has, OLD's name,
/// its manifest (a study) or the fingerprint of each target's last study (the history), and
/// what OLD lacks of its plan.
struct Against {
    pairs: Vec<Pair>,
    left_out: LeftOut,
    name: String,
    old_m: Option<Manifest>,
    last_fp: BTreeMap<String, BTreeMap<String, String>>,
    incomplete: Vec<String>,
}

/// The fingerprint fields that differ between OLD and NEW, per target the pairs cover.
fn differences(
    pairs: &[Pair],
    old_fp: impl Fn(&str) -> BTreeMap<String, String>,
    new_m: &Manifest,
) -> Diffs {
    let targets: std::collections::BTreeSet<&str> =
        pairs.iter().map(|p| p.key.target.as_str()).collect();
    let mut diffs = Vec::new();
    for t in targets {
        for (f, o, n) in history::differences(&old_fp(t), &history::fingerprint(new_m, t)) {
            diffs.push((t.to_string(), f, o, n));
        }
    }
    diffs
}

/// NEW's figures paired with OLD's: the overlap, and what either alone has. Nothing in common
/// is an error naming both sides' figures.
fn against_study(
    new_dir: &Path,
    new_figs: &BTreeMap<Key, Vec<f64>>,
    old: &Path,
) -> anyhow::Result<Against> {
    let (old_m, old_r) = study(old, "OLD")?;
    let old_figs = gate::figures(&old_r, &old_m.plan.workloads);
    let old_limits = gate::limits(&old_r, &old_m.plan.workloads);
    let pairs: Vec<Pair> = new_figs
        .iter()
        .filter_map(|(k, new)| {
            old_figs.get(k).map(|o| Pair {
                key: k.clone(),
                new: new.clone(),
                old: o.clone(),
                history_spread: None,
                limits: Sides {
                    old: old_limits.get(k).copied(),
                    new: None,
                },
            })
        })
        .collect();
    if pairs.is_empty() {
        anyhow::bail!(
            "NEW {} and OLD {} have no figure in common (NEW: {}; OLD: {}): check two studies of the same targets, jobs and tests",
            new_dir.display(),
            old.display(),
            names(new_figs),
            names(&old_figs)
        );
    }
    let left_out = LeftOut {
        new_only: only_in(new_figs, &old_figs),
        old_only: only_in(&old_figs, new_figs),
    };
    let name = old.display().to_string();
    Ok(Against {
        pairs,
        left_out,
        incomplete: gate::incomplete("OLD", &name, &old_m, &old_r, &old_figs),
        name,
        old_m: Some(old_m),
        last_fp: BTreeMap::new(),
    })
}

/// The figures of `a` that `b` does not have.
fn only_in(a: &BTreeMap<Key, Vec<f64>>, b: &BTreeMap<Key, Vec<f64>>) -> Vec<Key> {
    a.keys().filter(|k| !b.contains_key(k)).cloned().collect()
}

/// NEW's figures paired with the last `n` studies before it in the history that have them.
fn against_history(
    new_dir: &Path,
    new_m: &Manifest,
    new_figs: &BTreeMap<Key, Vec<f64>>,
    past: &mut Past,
    n: u32,
) -> anyhow::Result<Against> {
    let mut pairs = Vec::new();
    let mut left_out = LeftOut::default();
    let mut last_fp: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (k, new) in new_figs {
        // The studies before NEW (checking an older study takes the ones before it).
        let pts: Vec<Point> = past
            .points(k)?
            .into_iter()
            .filter(|p| p.started < new_m.created_at)
            .collect();
        let take = &pts[pts.len().saturating_sub(n as usize)..];
        let old: Vec<f64> = take.iter().flat_map(|p| p.values.clone()).collect();
        if old.is_empty() {
            left_out.new_only.push(k.clone());
            continue;
        }
        if let Some(p) = take.last() {
            last_fp.insert(k.target.clone(), p.fingerprint.clone());
        }
        let words: Vec<String> = take.iter().flat_map(|p| p.limiters.clone()).collect();
        pairs.push(Pair {
            key: k.clone(),
            new: new.clone(),
            old,
            history_spread: None,
            limits: Sides {
                old: gate::most_common(&words),
                new: None,
            },
        });
    }
    if pairs.is_empty() {
        anyhow::bail!("NEW {}: the history holds no earlier study with any of its figures ({}): run the same targets and jobs before, or check --against OLD", new_dir.display(), names(new_figs));
    }
    Ok(Against {
        pairs,
        left_out,
        name: format!("the last {n} studies in the history"),
        old_m: None,
        last_fp,
        incomplete: Vec::new(),
    })
}

/// The figures' names, for a message (at most 6).
fn names(f: &BTreeMap<Key, Vec<f64>>) -> String {
    let mut v: Vec<String> = f.keys().take(6).map(|k| k.to_string()).collect();
    if f.len() > 6 {
        v.push(format!("and {} more", f.len() - 6));
    }
    v.join(", ")
}
