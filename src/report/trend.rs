//! A metric's trend across the studies of the history: per test, each study's geometric mean
//! and 95% interval over its repeats (`stats::summarize`), the points where the environment's
//! fingerprint changed marked and the changed fields named; as text and as an offline HTML
//! page with one chart per test (hand-written SVG in the report's style).

use std::fmt::Write;

use super::markup::esc;
use super::stats;
use super::svg::{color, short, ticks};

/// One study's values of the figure, and what changed in its fingerprint since the study
/// before it: (field, before, now).
pub(crate) struct TrendPoint {
    pub(crate) run_id: String,
    pub(crate) started: String,
    pub(crate) values: Vec<f64>,
    pub(crate) changed: Vec<(String, String, String)>,
}

pub(crate) struct Trend {
    pub(crate) metric: String,
    pub(crate) target: String,
    pub(crate) workload: String,
    pub(crate) tests: Vec<(String, Vec<TrendPoint>)>,
}

fn interval(p: &TrendPoint) -> (f64, f64, f64, usize) {
    let s = stats::summarize(&p.values);
    (s.mean, s.ci_lo, s.ci_hi, s.n)
}

impl Trend {
    pub(crate) fn text(&self) -> String {
        let mut s = format!(
            "{} of {} / {} across {} studies (geometric mean over repeats, 95% interval)\n",
            self.metric,
            self.target,
            self.workload,
            self.tests.first().map_or(0, |t| t.1.len())
        );
        for (test, pts) in &self.tests {
            let _ = writeln!(s, "\n{test}:");
            for p in pts {
                let (m, lo, hi, n) = interval(p);
                let iv = if n >= 2 {
                    format!("[{}, {}]", short(lo), short(hi))
                } else {
                    "(one repeat)".into()
                };
                let _ = writeln!(
                    s,
                    "  {:<20} {:<26} {:>9} {iv}",
                    p.started.chars().take(19).collect::<String>(),
                    p.run_id,
                    short(m)
                );
                for (f, a, b) in &p.changed {
                    let _ = writeln!(s, "      changed: {f} {a} -> {b}");
                }
            }
        }
        s
    }

    /// Per test, each study's figures (machine-readable).
    pub(crate) fn json(&self) -> serde_json::Value {
        let tests: Vec<serde_json::Value> = self
            .tests
            .iter()
            .map(|(test, pts)| {
                let points: Vec<serde_json::Value> = pts
                    .iter()
                    .map(|p| {
                        let (m, lo, hi, n) = interval(p);
                        serde_json::json!({"run_id": p.run_id, "started": p.started,
                            "mean": m, "ci_lo": lo, "ci_hi": hi, "repeats": n,
                            "changed": p.changed})
                    })
                    .collect();
                serde_json::json!({"test": test, "points": points})
            })
            .collect();
        serde_json::json!({"metric": self.metric, "target": self.target,
            "workload": self.workload, "tests": tests})
    }

    /// The page: one chart per test, and the list of fingerprint changes.
    pub(crate) fn html(&self) -> String {
        let title = format!("{} of {} / {}", self.metric, self.target, self.workload);
        let mut body = String::new();
        for (test, pts) in &self.tests {
            body.push_str(&chart(
                &format!("{test}: {}", self.metric),
                &self.metric,
                pts,
            ));
            let changes: Vec<String> = pts
                .iter()
                .enumerate()
                .filter(|(_, p)| !p.changed.is_empty())
                .map(|(i, p)| {
                    let what: Vec<String> = p
                        .changed
                        .iter()
                        .map(|(f, a, b)| format!("{f}: {a} → {b}"))
                        .collect();
                    format!(
                        "<li>study {} ({}): {}</li>",
                        i + 1,
                        esc(&p.run_id),
                        esc(&what.join("; "))
                    )
                })
                .collect();
            if !changes.is_empty() {
                let _ = write!(
                    body,
                    "<p class=\"note\">Fingerprint changes (dashed lines):</p><ul class=\"note\">{}</ul>",
                    changes.join("")
                );
            }
        }
        format!(
            r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{t}</title>
<style>
body{{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}}
h1{{font-size:1.5em}} .note{{color:#555;font-size:.85em}}
svg.chart{{display:block;margin:.5em 0}} svg .title{{font-size:13px;font-weight:bold}}
svg .axis{{font-size:11px;fill:#333}} svg line.grid{{stroke:#e5e5e5}}
svg .err{{stroke:#000;stroke-width:1.2;fill:none}} svg .guide{{stroke:#b00;stroke-dasharray:4 3}}
</style></head>
<body><h1>{t}</h1>
<p class="note">One point per study, oldest first: the geometric mean of its repeats with the 95% interval (Student t on the logs). A dashed line marks a study whose environment fingerprint (kernel, CPU, memory, fsbench, mkfs tool, mount options, ...) differs from the study before it. Generated by fsbench {v}; this file needs no network.</p>
{body}
</body></html>
"#,
            t = esc(&title),
            v = env!("CARGO_PKG_VERSION"),
        )
    }
}

/// One test's series: points with interval bars joined by a line, dashed markers at changes.
fn chart(title: &str, unit: &str, pts: &[TrendPoint]) -> String {
    let (w, left, right, top, ph) = (760.0, 64.0, 20.0, 28.0, 220.0);
    let pw = w - left - right;
    let h = top + ph + 44.0;
    let iv: Vec<(f64, f64, f64, usize)> = pts.iter().map(interval).collect();
    let hi = iv.iter().map(|v| v.2.max(v.0)).fold(0.0f64, f64::max);
    let yt = ticks(if hi.is_normal() && hi > 0.0 { hi } else { 1.0 }, 5);
    let end = *yt.last().unwrap_or(&1.0);
    let n = pts.len().max(1);
    let px = |i: usize| left + pw * (i as f64 + 0.5) / n as f64;
    let py = |v: f64| top + ph - (v / end).clamp(0.0, 1.0) * ph;
    let mut s = format!(
        r#"<svg class="chart" viewBox="0 0 {w:.0} {h:.0}" width="{w:.0}" height="{h:.0}" role="img" aria-label="{t}"><text x="4" y="16" class="title">{t}</text>"#,
        t = esc(title)
    );
    for v in &yt {
        let _ = write!(
            s,
            r#"<line x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="axis" text-anchor="end">{}</text>"#,
            left + pw,
            left - 4.0,
            py(*v) + 4.0,
            esc(&short(*v)),
            y = py(*v)
        );
    }
    let _ = write!(
        s,
        r#"<text transform="translate(12,{:.1}) rotate(-90)" class="axis" text-anchor="middle">{}</text><text x="{:.1}" y="{:.1}" class="axis" text-anchor="middle">study (oldest first)</text>"#,
        top + ph / 2.0,
        esc(unit),
        left + pw / 2.0,
        top + ph + 34.0
    );
    for (i, p) in pts.iter().enumerate() {
        if !p.changed.is_empty() {
            let x = px(i) - pw / n as f64 / 2.0;
            let what: Vec<&str> = p.changed.iter().map(|c| c.0.as_str()).collect();
            let _ = write!(
                s,
                r#"<line x1="{x:.1}" x2="{x:.1}" y1="{top}" y2="{:.1}" class="guide"><title>changed: {}</title></line>"#,
                top + ph,
                esc(&what.join(", "))
            );
        }
    }
    let line: Vec<String> = iv
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:.1},{:.1}", px(i), py(v.0)))
        .collect();
    let _ = write!(
        s,
        r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
        line.join(" "),
        color(0)
    );
    for (i, (p, v)) in pts.iter().zip(&iv).enumerate() {
        let x = px(i);
        if v.3 >= 2 {
            let _ = write!(
                s,
                r#"<path class="err" d="M{x:.1},{:.1}V{:.1}M{:.1},{:.1}h6M{:.1},{:.1}h6"/>"#,
                py(v.1),
                py(v.2),
                x - 3.0,
                py(v.1),
                x - 3.0,
                py(v.2)
            );
        }
        let _ = write!(
            s,
            r#"<circle cx="{x:.1}" cy="{:.1}" r="3.5" fill="{}"><title>{} {}: {} [{}, {}], {} repeats</title></circle>"#,
            py(v.0),
            color(0),
            esc(&p.run_id),
            esc(&p.started),
            short(v.0),
            short(v.1),
            short(v.2),
            v.3
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_marks_a_fingerprint_change_and_has_no_network() {
        let p = |id: &str, v: &[f64], changed: bool| TrendPoint {
            run_id: id.into(),
            started: "2026-11-24T01:00:00Z".into(),
            values: v.to_vec(),
            changed: if changed {
                vec![("kernel".into(), "6.1".into(), "6.6".into())]
            } else {
                vec![]
            },
        };
        let t = Trend {
            metric: "iops".into(),
            target: "ext4".into(),
            workload: "cdm".into(),
            tests: vec![(
                "rnd4k-q32t1-read".into(),
                vec![p("a", &[100.0, 110.0], false), p("b", &[90.0], true)],
            )],
        };
        let html = t.html();
        assert!(html.contains("class=\"guide\""));
        assert!(html.contains("kernel: 6.1 → 6.6"));
        assert!(!html.contains("http://") && !html.contains("https://"));
        let text = t.text();
        assert!(text.contains("changed: kernel 6.1 -> 6.6"));
        assert!(text.contains("(one repeat)"));
    }
}
