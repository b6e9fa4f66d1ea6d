//! `fsbench report DIR`: statistics over a study, in any of the report formats. Needs no root.

use anyhow::Context;

use super::Exit;
use crate::cli::ReportArgs;
use crate::report::{formats, StudyReport};

pub fn run(a: ReportArgs) -> anyhow::Result<Exit> {
    let records = crate::store::load_results(&a.dir).context(
        "give the directory of a study (what `fsbench compare --out DIR` or `fsbench run --out DIR` wrote)",
    )?;
    let manifest_warnings = crate::store::read_manifest(&a.dir)
        .map(|m| m.warnings)
        .unwrap_or_default();
    let mut rep = StudyReport::build(records, a.baseline.as_deref(), &manifest_warnings)
        .map_err(anyhow::Error::msg)?;
    rep.color = a.format == "term" && super::stdout_wants_color();
    let f = formats::find(&a.format).with_context(|| format!("unknown format '{}'", a.format))?;
    print!(
        "{}",
        f.render(&rep, &format!("fsbench study {}", a.dir.display()))
    );
    Ok(Exit::Ok)
}
