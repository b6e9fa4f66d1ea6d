//! Report formats: one table of renderers behind one small trait (as hyperfine's exporters).
//! Adding a format is a type here (or in its own file) and one line in `FORMATS`.

use super::StudyReport;

pub(crate) trait Renderer: Sync {
    /// The name `--format` takes.
    fn name(&self) -> &'static str;
    /// One line for `--help`.
    fn help(&self) -> &'static str;
    /// The whole output; `title` names the study.
    fn render(&self, rep: &StudyReport, title: &str) -> String;
}

struct Term;
struct Markdown;
struct Csv;
struct Json;
struct Html;
struct BonnieCsv;
struct IozoneR;
struct FioJson;
struct Hlog;
struct Ior;
struct Mdtest;

impl Renderer for Ior {
    fn name(&self) -> &'static str {
        "ior"
    }
    fn help(&self) -> &'static str {
        "the ior workload's runs as IOR prints them (its Results lines and \"Summary of all tests\" table), for tools that parse IOR's output"
    }
    fn render(&self, rep: &StudyReport, _title: &str) -> String {
        super::ior::text(&rep.records)
    }
}

impl Renderer for Mdtest {
    fn name(&self) -> &'static str {
        "mdtest"
    }
    fn help(&self) -> &'static str {
        "the mdtest workload's runs as mdtest prints them (its \"SUMMARY rate\" table), for tools that parse mdtest's output"
    }
    fn render(&self, rep: &StudyReport, _title: &str) -> String {
        super::mdtest::text(&rep.records)
    }
}

impl Renderer for Hlog {
    fn name(&self) -> &'static str {
        "hlog"
    }
    fn help(&self) -> &'static str {
        "latency over time: every record's per-interval histograms as one HdrHistogram interval log (.hlog), tagged target/workload/test/repeat, for HdrHistogram's log tools and plotters"
    }
    fn render(&self, rep: &StudyReport, _title: &str) -> String {
        super::overtime::hlog_text(&rep.records)
    }
}

impl Renderer for FioJson {
    fn name(&self) -> &'static str {
        "fio-json"
    }
    fn help(&self) -> &'static str {
        "block records in fio's --output-format=json shape (jobs[] with read/write, bw, iops, clat_ns percentiles), for tools that read fio's JSON"
    }
    fn render(&self, rep: &StudyReport, _title: &str) -> String {
        let v = super::fiojson::render(&rep.records);
        serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
    }
}

impl Renderer for IozoneR {
    fn name(&self) -> &'static str {
        "iozone"
    }
    fn help(&self) -> &'static str {
        "the iozone workload's matrices as iozone -R text tables (for iozone's graphing scripts)"
    }
    fn render(&self, rep: &StudyReport, _title: &str) -> String {
        let z = super::views::iozone::Iozone::collect(&rep.records);
        super::views::iozone::r_text(&z)
    }
}

impl Renderer for BonnieCsv {
    fn name(&self) -> &'static str {
        "bonnie-csv"
    }
    fn help(&self) -> &'static str {
        "the bonnie workload's records as bonnie++ 1.98-format CSV lines (for bon_csv2txt, bon_csv2html)"
    }
    fn render(&self, rep: &StudyReport, _title: &str) -> String {
        let all: Vec<&crate::store::Record> = rep.records.iter().collect();
        super::views::bonnie::csv(&all)
    }
}

impl Renderer for Term {
    fn name(&self) -> &'static str {
        "term"
    }
    fn help(&self) -> &'static str {
        "tables for a terminal: CrystalDiskMark-like, ratios, files, grouped warnings (--full: every table and the statistics)"
    }
    fn render(&self, rep: &StudyReport, _title: &str) -> String {
        rep.term(rep.full) + &rep.warnings_term()
    }
}

impl Renderer for Markdown {
    fn name(&self) -> &'static str {
        "md"
    }
    fn help(&self) -> &'static str {
        "Markdown: the views, every key metric with its interval, warnings"
    }
    fn render(&self, rep: &StudyReport, _title: &str) -> String {
        rep.markdown()
    }
}

impl Renderer for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn help(&self) -> &'static str {
        "one row per (target, test, metric) with n, mean, sd, CI, ratio, p"
    }
    fn render(&self, rep: &StudyReport, _title: &str) -> String {
        rep.csv()
    }
}

impl Renderer for Json {
    fn name(&self) -> &'static str {
        "json"
    }
    fn help(&self) -> &'static str {
        "the statistics rows as JSON"
    }
    fn render(&self, rep: &StudyReport, _title: &str) -> String {
        rep.json()
    }
}

impl Renderer for Html {
    fn name(&self) -> &'static str {
        "html"
    }
    fn help(&self) -> &'static str {
        "one self-contained offline page with charts"
    }
    fn render(&self, rep: &StudyReport, title: &str) -> String {
        rep.html(title)
    }
}

pub(crate) static FORMATS: &[&dyn Renderer] = &[
    &Term, &Markdown, &Csv, &Json, &Html, &BonnieCsv, &IozoneR, &FioJson, &Hlog, &Ior, &Mdtest,
];

pub(crate) fn names() -> Vec<&'static str> {
    FORMATS.iter().map(|f| f.name()).collect()
}

pub(crate) fn find(name: &str) -> Option<&'static dyn Renderer> {
    FORMATS.iter().copied().find(|f| f.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_a_unique_name_and_renders_an_empty_study() {
        let mut seen = std::collections::HashSet::new();
        let rep = StudyReport::build(Vec::new(), None, &[]).unwrap_or_else(|_| StudyReport {
            records: Vec::new(),
            measured: Vec::new(),
            ranked: Vec::new(),
            baseline: String::new(),
            rows: Vec::new(),
            warnings: Vec::new(),
            color: false,
            full: false,
            screen: crate::report::Screen::default(),
            given: crate::report::Given::default(),
        });
        for f in FORMATS {
            assert!(seen.insert(f.name()), "{} twice", f.name());
            assert!(!f.help().is_empty());
            let _ = f.render(&rep, "t");
        }
        assert!(find("html").is_some() && find("pdf").is_none());
    }
}
