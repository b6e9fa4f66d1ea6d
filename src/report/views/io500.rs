//! io500's figures: each phase in io500's units per target, the score behind them, and the
//! targets ranked by that score, saying that the ranking is fsbench's (io500 measures one system
//! at a time) and whether each run is one io500's list would take. Means over repeats. Pure.

use crate::metrics::name as metric;
use crate::report::records::{mean_of, targets};
use crate::report::view::{Body, Grid, Section, Shown, Study, WorkloadView};
use crate::store::{Outcome, Record};
use crate::workload::io500::{phases::PHASES, DEF};

pub(crate) struct Io500;

impl WorkloadView for Io500 {
    fn claims(&self, workload: &str) -> bool {
        workload == DEF.name
    }

    fn ranks(&self) -> bool {
        true
    }

    fn sections(&self, mine: &[&Record], _study: &Study) -> Vec<Section> {
        let ok: Vec<&Record> = mine
            .iter()
            .copied()
            .filter(|r| r.outcome == Outcome::Ok)
            .collect();
        let names = targets(ok.iter().map(|r| r.target.as_str()));
        if names.is_empty() {
            return Vec::new();
        }
        let of = |t: &str, test: &str, key: &str| {
            let rs: Vec<&Record> = ok
                .iter()
                .copied()
                .filter(|r| r.target == t && r.test == test)
                .collect();
            mean_of(&rs, key)
        };
        let cell = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
        let mut rows: Vec<Vec<String>> = PHASES
            .iter()
            .map(|p| {
                let mut line = vec![p.name.to_string(), p.unit.name().to_string()];
                line.extend(
                    names
                        .iter()
                        .map(|t| cell(of(t, p.name, metric::IO500_VALUE))),
                );
                line
            })
            .collect();
        for (label, unit, key) in [
            ("bw", "GiB/s", metric::IO500_BW),
            ("md", "kIOPS", metric::IO500_MD),
            ("score", "", metric::IO500_SCORE),
        ] {
            let mut line = vec![label.to_string(), unit.to_string()];
            line.extend(names.iter().map(|t| cell(of(t, "score", key))));
            rows.push(line);
        }
        let mut header = vec!["phase".to_string(), "unit".to_string()];
        header.extend(names.iter().map(|t| t.to_string()));
        let phases = Grid::new(
            header,
            rows,
            "io500's figures as io500 prints them: bw = geometric mean of the ior phases, md = of the mdtest and find phases, score = sqrt(bw x md)",
        );
        let mut ranked: Vec<(&str, f64, bool)> = names
            .iter()
            .filter_map(|t| {
                let score = of(t, "score", metric::IO500_SCORE)?;
                // Every repeat's run one io500's list would take.
                let valid = ok
                    .iter()
                    .filter(|r| r.target == *t && r.test == "score")
                    .all(|r| {
                        r.config
                            .as_ref()
                            .is_some_and(|c| c["io500"]["comparable"] == true)
                    });
                Some((*t, score, valid))
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        let rank_rows = ranked
            .iter()
            .enumerate()
            .map(|(i, (t, s, valid))| {
                vec![
                    format!("{}", i + 1),
                    t.to_string(),
                    format!("{s:.3}"),
                    match valid {
                        true => "yes".into(),
                        false => "no: write phases under 300 s (io500: INVALID)".into(),
                    },
                ]
            })
            .collect();
        let mut ranking = Grid::new(
            ["rank", "target", "io500 score", "comparable with the io500 list"]
                .map(String::from)
                .to_vec(),
            rank_rows,
            "ranked by fsbench by io500's score: io500 measures one storage system at a time and its list is not a ranking of filesystems",
        );
        ranking.right = vec![0, 2];
        vec![
            Section {
                title: "io500 phases".into(),
                shown: Shown::BRIEF,
                body: Body::Table(phases),
            },
            Section {
                title: "io500 score, targets ranked".into(),
                shown: Shown::BRIEF,
                body: Body::Table(ranking),
            },
        ]
    }
}
