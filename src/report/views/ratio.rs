//! The iozone ratio study's view: the ratio-to-baseline matrix over the statistics rows, tests x targets, each
//! cell the ratio of the target's mean to the baseline's (values above 1 beat the baseline), `*`
//! where Welch's test says the difference is real; in HTML also as a heat-map, each cell's
//! interval and p-value on hover. Claims no records: it reads the statistics of every workload
//! whose statistics are shown. Pure.

use super::less;
use crate::report::records::{targets, test_name};
use crate::report::summary::Row;
use crate::report::svg;
use crate::report::view::{Body, Charts, Grid, Section, Shown, Study, WorkloadView};
use crate::store::Record;

pub(crate) struct Ratio;

impl WorkloadView for Ratio {
    fn claims(&self, _workload: &str) -> bool {
        false
    }

    fn sections(&self, _mine: &[&Record], study: &Study) -> Vec<Section> {
        let Some((title, grid)) = matrix(study.rows, study.ranked, study.baseline) else {
            return Vec::new();
        };
        vec![
            Section {
                title: String::new(),
                shown: Shown::HTML,
                body: Body::Charts(Charts {
                    svgs: vec![heatmap(study.rows, &title, &grid)],
                    row: false,
                    lead: true,
                }),
            },
            Section {
                title,
                shown: Shown::BRIEF,
                body: Body::Table(grid),
            },
        ]
    }
}

/// The metric that stands for a test in the ratio matrix: IOPS for block jobs, files/s for the
/// files workload, else bytes/s.
fn headline(rows: &[Row], workload: &str, test: &str) -> Option<&'static str> {
    crate::metrics::catalog::HEADLINES
        .iter()
        .copied()
        .find(|m| {
            rows.iter()
                .any(|r| r.workload == workload && r.test == test && r.metric == *m)
        })
}

/// A ratio matrix row's name: "cdm SEQ1M_Q8T1-read (iops)".
fn name_of(w: &str, t: &str, metric: &str) -> String {
    format!("{} ({metric})", test_name(w, t))
}

/// The matrix's title and table, when there are two targets or more.
fn matrix(rows: &[Row], ranked: &[Record], baseline: &str) -> Option<(String, Grid)> {
    let targets = targets(rows.iter().map(|r| r.target.as_str()));
    let mut tests: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        let t = (r.workload.as_str(), r.test.as_str());
        if !tests.contains(&t) {
            tests.push(t);
        }
    }
    if targets.len() < 2 {
        return None;
    }
    let mut out = Vec::new();
    for (w, t) in tests {
        // Only what a verdict ranks is put to a baseline (not io500, which its view ranks).
        let name = w.split(':').next().unwrap_or(w);
        if !ranked.iter().any(|r| r.workload_name() == name) {
            continue;
        }
        let Some(m) = headline(rows, w, t) else {
            continue;
        };
        let mut line = vec![name_of(w, t, m)];
        for target in &targets {
            let cell = rows
                .iter()
                .find(|r| r.workload == w && r.test == t && r.metric == m && r.target == *target)
                .map(|r| {
                    let less = if r.less_work { less::MARK } else { "" };
                    match r.ratio {
                        Some(x) => format!("{x:.2}{}{less}", if r.significant { "*" } else { "" }),
                        None => format!("1.00{less}"),
                    }
                })
                .unwrap_or_else(|| "-".into());
            line.push(cell);
        }
        out.push(line);
    }
    if out.is_empty() {
        return None;
    }
    let mut header = vec!["test".to_string()];
    header.extend(targets.iter().map(|t| t.to_string()));
    let mut note =
        String::from("* the difference is significant (Welch's t-test on the logs, p < 0.05).");
    if rows.iter().any(|r| r.less_work) {
        note.push(' ');
        note.push_str(less::MARK_NOTE);
    }
    Some((
        format!("Ratio to {baseline} (values above 1 beat {baseline})"),
        Grid::new(header, out, note),
    ))
}

/// The matrix as a heat-map, each cell's interval and p-value on hover.
fn heatmap(rows: &[Row], title: &str, v: &Grid) -> String {
    let cols: Vec<String> = v.header.iter().skip(1).cloned().collect();
    // The rows with a ratio, under the matrix's names for them (named once, not per cell).
    let named: Vec<(String, &Row)> = rows
        .iter()
        .filter(|r| r.ratio.is_some())
        .map(|r| (name_of(&r.workload, &r.test, &r.metric), r))
        .collect();
    let mut out = Vec::new();
    for line in &v.rows {
        let name = line[0].clone();
        let cells = cols
            .iter()
            .enumerate()
            .map(|(j, target)| {
                let text = line.get(j + 1).cloned().unwrap_or_default();
                let row = named
                    .iter()
                    .find(|(n, r)| &r.target == target && *n == name)
                    .map(|x| x.1);
                let hover = match row {
                    Some(r) => format!(
                        "{target}, {name}: ratio {:.3}{}{}",
                        r.ratio.unwrap_or(1.0),
                        r.ratio_ci
                            .map(|(lo, hi)| format!(", 95% CI {lo:.3} .. {hi:.3}"))
                            .unwrap_or_default(),
                        r.p_value
                            .map(|p| format!(", p = {p:.3}"))
                            .unwrap_or_default()
                    ),
                    None => format!("{target}, {name}: {text}"),
                };
                svg::HeatCell {
                    ratio: text.trim_end_matches(['*', '!']).parse().ok(),
                    text,
                    hover,
                }
            })
            .collect();
        out.push((name, cells));
    }
    svg::heatmap(title, &cols, &out)
}
