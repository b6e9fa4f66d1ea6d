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
        let note = format!("{}. {WHY_THEY_DIFFER}", tally(&found));
        // Every medium but the short terminal says what each figure measures; there, the claim
        // says it, and its figure takes a line where the wording took three.
        let mut sections = [
            (Shown::DETAIL, Measured::Said),
            (Shown::SHORT, Measured::Figure),
        ]
        .into_iter()
        .map(|(shown, measured)| Section {
            title: title.clone(),
            shown,
            body: Body::Table(table(&found, measured, &note)),
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

/// The claims checked as a table.
fn table(found: &[Finding], measured: Measured, note: &str) -> Grid {
    let rows: Vec<Vec<String>> = found
        .iter()
        .map(|f| {
            vec![
                f.says.clone(),
                f.published.clone().unwrap_or_else(|| "-".into()),
                match measured {
                    Measured::Said => format!("{}: {}", f.measured_as, check::measured(f)),
                    Measured::Figure => check::measured(f),
                },
                f.expect.clone(),
                verdict_cell(f),
            ]
        })
        .collect();
    Grid {
        header: [
            "claim",
            "published",
            "measured (95% CI)",
            "expect",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        note: Some(note.to_string()),
        right: Vec::new(),
        wrap: true,
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
