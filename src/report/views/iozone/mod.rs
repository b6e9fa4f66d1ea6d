//! The iozone workload's view. iozone measures a matrix per test (file size x record size) per
//! target, hundreds of cells a study: the short terminal report keeps what decides (per headline
//! test and target the throughput over the cells, the ratio to the baseline with its interval
//! and the cells where it is lowest and highest: `summary.rs`) and says where the rest is; the
//! matrices go to `--full` and report.md as text (`matrices.rs`) and to the HTML page as heat maps
//! (`heatmaps.rs`); iozone's `-R` text is `--format iozone` (`rtext.rs`). `matrix.rs` collects
//! the cells every layout reads. Pure.

mod heatmaps;
mod matrices;
mod matrix;
mod rtext;
mod summary;

use crate::report::view::{Body, Section, Shown, Statistics, Study, WorkloadView};
use crate::store::Record;
use crate::workload::iozone::NAME;

pub(crate) use matrix::Iozone;
pub(crate) use rtext::r_text;

/// The matrices, in a layout of each format's own.
pub(crate) struct IozoneView;

/// Sections the HTML page shows inside the view's own part (its summary heads the heat maps).
const BESIDE_THE_MAPS: Shown = Shown {
    html: false,
    ..Shown::BRIEF
};

impl WorkloadView for IozoneView {
    fn claims(&self, workload: &str) -> bool {
        workload == NAME
    }

    /// Hundreds of cells per target would drown the statistics rows and the ratio matrix.
    fn statistics(&self) -> Statistics {
        Statistics::Exported
    }

    fn sections(&self, mine: &[&Record], study: &Study) -> Vec<Section> {
        let z = Iozone::collect(mine.iter().copied());
        if z.is_empty() {
            return Vec::new();
        }
        let summary = summary::summary(&z, study.baseline);
        let throughput = summary::throughput(&z);
        let mut out = Vec::new();
        if let Some(g) = &summary {
            out.push(Section {
                title: format!(
                    "iozone over each test's cells, headline tests ({})",
                    z.headlines().join(", ")
                ),
                shown: BESIDE_THE_MAPS,
                body: Body::Table(g.clone()),
            });
        }
        out.push(Section {
            title: "iozone".into(),
            shown: Shown::DETAIL,
            body: Body::Own {
                term: matrices::term(&z, study.baseline, study.width, study.color),
                md: matrices::markdown(&z, study.baseline),
                html: heatmaps::html(&z, study.baseline, summary.as_ref(), throughput.as_ref()),
            },
        });
        if let Some(g) = throughput {
            out.push(Section {
                title: "iozone throughput mode".into(),
                shown: BESIDE_THE_MAPS,
                body: Body::Table(g),
            });
        }
        out
    }

    fn warnings(&self, mine: &[&Record]) -> Vec<String> {
        matrix::warnings(mine.iter().copied())
    }
}

#[cfg(test)]
mod tests;
