//! "Published vs this host": a study file's published findings (`[[claim]]`), each checked
//! against the records (`report/claims.rs`): the claim, the published figure, the measured one
//! with its 95% interval, and whether this host agrees, disagrees or cannot tell; then where each
//! claim comes from and why a host's figures differ from a paper's. Claims no records: it reads
//! every record through the claims. Pure.

use crate::report::claims::{self as check, Finding, Verdict, WHY_THEY_DIFFER};
use crate::report::view::{Body, Given, Grid, Place, Section, Shown, Study, WorkloadView};
use crate::store::Record;

pub(crate) struct Claims;

impl WorkloadView for Claims {
    fn claims(&self, _workload: &str) -> bool {
        false
    }

    fn place(&self) -> Place {
        Place::Answer
    }

    fn sections(&self, _mine: &[&Record], study: &Study) -> Vec<Section> {
        let Some(meta) = study.plan.study.as_ref().filter(|m| !m.claims.is_empty()) else {
            return Vec::new();
        };
        let found = check::check_all(&meta.claims, study.records);
        let title = match (&meta.title, &meta.source) {
            (Some(t), _) => format!("Published vs this host: {t}"),
            (None, Some(s)) => format!("Published vs this host: {s}"),
            _ => format!("Published vs this host: {}", meta.name),
        };
        // Every medium but the short terminal says what each figure measures, the published
        // figure and why a host's figures differ; there, the claim says what is measured, its
        // figure takes a line where the wording took three, and the rest is a pointer.
        let mut sections = [
            (Shown::DETAIL, Measured::Said, WHY_THEY_DIFFER),
            (Shown::SHORT, Measured::Figure, WHY_SHORT),
        ]
        .into_iter()
        .map(|(shown, measured, why)| Section {
            title: title.clone(),
            shown,
            body: Body::Table(table(
                &found,
                measured,
                &format!("{}. {why}", tally(&found)),
            )),
        })
        .collect::<Vec<_>>();
        let sources: Vec<String> = found
            .iter()
            .map(|f| {
                let mut s = format!("{}: \"{}\"", f.says, f.quote);
                if let Some(w) = &f.why {
                    s.push_str(&format!(" (here: {w})"));
                }
                s
            })
            .collect();
        sections.push(Section {
            title: format!(
                "Where each claim comes from{}",
                meta.source
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            ),
            shown: Shown::DETAIL,
            body: Body::Lines(sources),
        });
        sections
    }
}

/// What the measured column says of each claim.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Measured {
    /// What was measured and the figure: "iops of zfs / xfs in db-server: 0.634 (0.288-1.40)".
    Said,
    /// The figure alone: "0.634 (0.288-1.40)".
    Figure,
}

/// The short terminal's word on why a host's figures differ from a study's.
const WHY_SHORT: &str = "A disagreement says the finding does not carry over to this host as it is, not that the study was wrong (why a host's figures differ from a study's, and the published figures: report.md).";

/// The claims checked as a table (the published figure beside each where what was measured is
/// said).
fn table(found: &[Finding], measured: Measured, note: &str) -> Grid {
    let said = measured == Measured::Said;
    let rows: Vec<Vec<String>> = found
        .iter()
        .map(|f| {
            let mut row = vec![f.says.clone()];
            if said {
                row.push(f.published.clone().unwrap_or_else(|| "-".into()));
            }
            row.extend([
                match measured {
                    Measured::Said => format!("{}: {}", f.measured_as, check::measured(f)),
                    Measured::Figure => check::measured(f),
                },
                f.expect.clone(),
                verdict_cell(f),
            ]);
            row
        })
        .collect();
    let published: &[&str] = if said { &["published"] } else { &[] };
    Grid {
        header: ["claim"]
            .iter()
            .chain(published)
            .chain(&["measured (95% CI)", "expect", "verdict"])
            .map(|h| h.to_string())
            .collect(),
        rows,
        note: Some(note.to_string()),
        right: Vec::new(),
        spare: Vec::new(),
    }
}

/// The verdict, with why when it is for want of data.
fn verdict_cell(f: &Finding) -> String {
    match &f.reason {
        Some(r) if f.verdict == Verdict::Inconclusive => format!("inconclusive: {r}"),
        _ => f.verdict.word().to_string(),
    }
}

/// "3 agree, 1 disagrees, 1 inconclusive".
fn tally(found: &[Finding]) -> String {
    let n = |v: Verdict| found.iter().filter(|f| f.verdict == v).count();
    format!(
        "{} of {} claims agree with this host, {} disagree{}, {} inconclusive",
        n(Verdict::Agrees),
        found.len(),
        n(Verdict::Disagrees),
        if n(Verdict::Disagrees) == 1 { "s" } else { "" },
        n(Verdict::Inconclusive)
    )
}

/// The claims checked, as JSON, when the study has claims.
pub(crate) fn json(records: &[Record], given: &Given) -> Option<serde_json::Value> {
    let meta = given.study.as_ref().filter(|m| !m.claims.is_empty())?;
    serde_json::to_value(check::check_all(&meta.claims, records)).ok()
}
