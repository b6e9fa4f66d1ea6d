//! Every view of the report, in the order the report shows them: adding a view is a file in
//! this folder (a type that implements `view::WorkloadView`) and a line in `VIEWS`.
//!
//! Each workload's view claims its records by workload name; the views over the whole study's
//! statistics (ratio, latency, statistics, curves) claim none. Records no view claims (smoke,
//! idle, a target that could not be provisioned) are listed by the report's first table, with
//! every failed and skipped record.

mod aging;
pub(crate) mod audit;
pub(crate) mod block;
pub(crate) mod bonnie;
pub(crate) mod claims;
mod curves;
mod files;
mod io500;
pub(crate) mod iozone;
mod latency;
pub(crate) mod less;
pub(crate) mod limits;
mod profile;
mod ratio;
mod statistics;
pub(crate) mod tune;
pub(crate) mod verdict;

use super::view::WorkloadView;

/// The views in the order of the terminal report (report.md and the HTML page put the answer,
/// `Place::Answer`, first; the HTML page lays the body out by kind: charts that answer, tables,
/// text, curves). A view's `place` says whether it is said first, in the body or as the answer.
pub(crate) static VIEWS: &[&dyn WorkloadView] = &[
    &less::Less,
    &block::Block,
    &bonnie::Bonnie,
    &audit::Audit,
    &aging::Aging,
    &ratio::Ratio,
    &files::Files,
    &latency::Latency,
    &iozone::IozoneView,
    &io500::Io500,
    &statistics::Statistics,
    &curves::Curves,
    &limits::Limits,
    &profile::Profiles,
    &tune::Tune,
    &claims::Claims,
    &verdict::Verdict,
];

/// The view that claims a workload's records, if one does.
pub(crate) fn claiming(workload: &str) -> Option<&'static dyn WorkloadView> {
    VIEWS.iter().copied().find(|v| v.claims(workload))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_of_the_catalogue_has_at_most_one_view() {
        let mut names: Vec<&str> = crate::workload::WORKLOADS.iter().map(|w| w.name).collect();
        names.extend(crate::workload::presets::PRESETS.iter().map(|p| p.name));
        names.push(audit::NAME);
        for n in names {
            let n_views = VIEWS.iter().filter(|v| v.claims(n)).count();
            assert!(n_views <= 1, "{n} is claimed by {n_views} views");
        }
        for n in [
            "cdm", "block", "fio", "files", "bonnie", "iozone", "aging", "audit",
        ] {
            assert!(claiming(n).is_some(), "no view claims {n}");
        }
        for n in ["smoke", "idle", "provision"] {
            assert!(claiming(n).is_none(), "{n} has no view of its own");
        }
    }
}
