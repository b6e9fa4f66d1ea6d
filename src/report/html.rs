//! The HTML report: one self-contained file (no network, no external script, style or font), with
//! charts drawn as inline SVG (`report/svg.rs`). The sections are laid out by kind, the answer
//! first: the leading charts (the ratio heat-map, a chart per test), then the tables, then the
//! text in its own layout (bonnie++'s, iozone's heat-maps), then the curves over time. Pure:
//! sections in, text out.

use std::fmt::Write as _;

use super::markup::{esc, html_table};
use super::view::{Body, Charts, Section};
use super::warnings::Warning;

/// Charts under their heading, small ones side by side.
fn charts(title: &str, c: &Charts) -> String {
    let mut s = String::new();
    if !title.is_empty() {
        let _ = write!(s, "<h2>{}</h2>", esc(title));
    }
    if c.row {
        let _ = write!(s, "<div class=\"charts\">{}</div>", c.svgs.concat());
    } else {
        s.push_str(&c.svgs.concat());
    }
    s
}

/// The sections that head the page, in their order (what a target did not do, the answer).
fn lead(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections.iter().filter(|s| s.shown.html) {
        match &s.body {
            Body::Table(g) => {
                let _ = write!(out, "<h2>{}</h2>{}", esc(&s.title), html_table(g));
            }
            Body::Lines(lines) => out.push_str(&lines_html(&s.title, lines)),
            Body::Text { text, .. } => {
                let _ = write!(out, "<h2>{}</h2><pre>{}</pre>", esc(&s.title), esc(text));
            }
            Body::Own { html, .. } => out.push_str(html),
            Body::Charts(c) => out.push_str(&charts(&s.title, c)),
        }
    }
    out
}

/// Sentences under their heading, as a list.
fn lines_html(title: &str, lines: &[String]) -> String {
    let mut out = format!("<h2>{}</h2><ul class=\"verdict\">", esc(title));
    for l in lines {
        let _ = write!(out, "<li>{}</li>", esc(l));
    }
    out.push_str("</ul>");
    out
}

/// The page's body: the sections HTML shows, by kind.
fn body(sections: &[Section]) -> String {
    let shown: Vec<&Section> = sections.iter().filter(|s| s.shown.html).collect();
    let mut body = String::new();
    for s in &shown {
        if let Body::Charts(c) = &s.body {
            if c.lead {
                body.push_str(&charts(&s.title, c));
            }
        }
    }
    for s in &shown {
        match &s.body {
            Body::Table(g) => {
                let _ = write!(body, "<h2>{}</h2>{}", esc(&s.title), html_table(g));
            }
            Body::Lines(lines) => body.push_str(&lines_html(&s.title, lines)),
            _ => {}
        }
    }
    for s in &shown {
        match &s.body {
            Body::Text { text, .. } => {
                let _ = write!(body, "<h2>{}</h2><pre>{}</pre>", esc(&s.title), esc(text));
            }
            Body::Own { html, .. } => body.push_str(html),
            _ => {}
        }
    }
    for s in &shown {
        if let Body::Charts(c) = &s.body {
            if !c.lead {
                body.push_str(&charts(&s.title, c));
            }
        }
    }
    body
}

/// The warnings: each line, with the figures it concerns in a collapsed details element.
fn warnings_html(warnings: &[Warning]) -> String {
    if warnings.is_empty() {
        return String::new();
    }
    let mut w = String::from("<details class=\"warn\"><summary>");
    let _ = write!(
        w,
        "{} warning(s): what to know before trusting the figures</summary><ul>",
        warnings.len()
    );
    for x in warnings {
        let _ = write!(w, "<li>{}", esc(&x.text));
        if !x.details.is_empty() {
            let _ = write!(
                w,
                "<details><summary>the {} figures</summary><ul>",
                x.details.len()
            );
            for d in &x.details {
                let _ = write!(w, "<li>{}</li>", esc(d));
            }
            w.push_str("</ul></details>");
        }
        w.push_str("</li>");
    }
    w.push_str("</ul></details>");
    w
}

/// The page's own check, run by the browser test: texts of a chart that overlap each other,
/// charts that overlap, and charts without an axis label.
const CHECK_SCRIPT: &str = r#"
(function () {
  const charts = Array.from(document.querySelectorAll('svg.chart'));
  const hit = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
  const found = [];
  for (const c of charts) {
    const texts = Array.from(c.querySelectorAll('text')).filter(t => t.textContent.trim() !== '');
    const boxes = texts.map(t => t.getBoundingClientRect());
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++)
        if (hit(boxes[i], boxes[j])) found.push(texts[i].textContent + ' / ' + texts[j].textContent);
  }
  const cb = charts.map(c => c.getBoundingClientRect());
  for (let i = 0; i < cb.length; i++)
    for (let j = i + 1; j < cb.length; j++)
      if (hit(cb[i], cb[j])) found.push('chart ' + i + ' / chart ' + j);
  const unlabelled = charts.filter(c => !c.querySelector('.axis-label')).length;
  document.body.dataset.charts = String(charts.length);
  document.body.dataset.overlaps = String(found.length);
  document.body.dataset.overlapList = found.slice(0, 5).join(' | ');
  document.body.dataset.unlabelled = String(unlabelled);
  document.body.dataset.external = String(performance.getEntriesByType('resource').length);
  document.body.dataset.ready = '1';
})();
"#;

/// The page: its title, the baseline, the warnings and the sections.
pub(crate) fn render(
    title: &str,
    leading: &[Section],
    sections: &[Section],
    baseline: &str,
    warnings: &[Warning],
) -> String {
    let body = lead(leading) + &body(sections);
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{t}</title>
<style>
body{{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}}
h1{{font-size:1.5em}} h2{{font-size:1.1em;margin-top:2em}}
table{{border-collapse:collapse;font-size:.85em}} td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}}
td:first-child,th:first-child{{text-align:left}} .note{{color:#555;font-size:.85em}}
svg.chart{{display:block;margin:.5em 0}} .charts{{display:flex;flex-wrap:wrap;gap:1em}}
svg .title{{font-size:13px;font-weight:bold}} svg .axis{{font-size:11px;fill:#333}}
svg line.grid{{stroke:#e5e5e5}} svg .err{{stroke:#000;stroke-width:1.2;fill:none}}
svg .guide{{stroke:#999;stroke-dasharray:4 3}} svg .guide-label{{fill:#666}}
details.warn{{color:#8a4b00;margin:1em 0}} details.warn summary{{cursor:pointer}}
ul.verdict{{font-size:1.05em;line-height:1.5}}
</style></head>
<body><h1>{t}</h1>
<p class="note">Baseline: {b}. Figures are geometric means over repeats with 95% confidence intervals computed on the log scale (Student t), so no interval of a positive figure reaches below zero; ratios and Welch's test use the same logs. Hover a bar or a heat-map cell for its interval. Generated by fsbench {v}; this file needs no network.</p>
{warn}{body}
<script>{CHECK_SCRIPT}</script>
</body></html>
"#,
        t = esc(title),
        b = esc(baseline),
        v = env!("CARGO_PKG_VERSION"),
        warn = warnings_html(warnings),
    )
}
