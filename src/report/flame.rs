//! Flame graphs of a study's profiles (inferno, Brendan Gregg's flamegraph.pl in Rust): one per
//! target and test, and a differential of each target against the baseline (the target's
//! stacks, each frame coloured by how its share changed: red grew, blue shrank). Each SVG is a
//! document of its own (its script zooms and searches, none is needed to read it); the HTML
//! page embeds it as a data URI, so the page stays one file that fetches nothing.

use crate::profile::folded::{Folded, Kind};

/// A graph narrower than this many pixels is left out (fewer, smaller files; nothing visible
/// is lost).
const MIN_WIDTH: f64 = 0.5;

fn options(title: &str, subtitle: &str, kind: Kind) -> inferno::flamegraph::Options<'static> {
    use inferno::flamegraph::color::{MultiPalette, Palette};
    let mut o = inferno::flamegraph::Options::default();
    o.title = title.to_string();
    o.subtitle = Some(subtitle.to_string());
    // Kernel frames (`_[k]`) orange, Rust's (`::`) yellow, C's and libraries' red.
    o.colors = Palette::Multi(MultiPalette::Perl);
    o.hash = true;
    o.min_width = MIN_WIDTH;
    o.count_name = match kind {
        Kind::OnCpu => "samples".into(),
        Kind::OffCpu => "us".into(),
    };
    o
}

fn render(o: &mut inferno::flamegraph::Options, lines: &str) -> Option<String> {
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(o, lines.lines(), &mut out).ok()?;
    String::from_utf8(out).ok()
}

/// A flame graph of `f`.
pub(crate) fn flame(f: &Folded, kind: Kind, title: &str, subtitle: &str) -> Option<String> {
    if f.is_empty() {
        return None;
    }
    render(&mut options(title, subtitle, kind), &f.text())
}

/// A differential flame graph: `after`'s stacks, coloured by the change from `before` (both
/// normalised to the same total, so a frame is red when its share grew).
pub(crate) fn differential(
    before: &Folded,
    after: &Folded,
    kind: Kind,
    title: &str,
    subtitle: &str,
) -> Option<String> {
    if before.is_empty() || after.is_empty() {
        return None;
    }
    let opt = inferno::differential::Options {
        normalize: true,
        strip_hex: false,
    };
    let mut lines = Vec::new();
    inferno::differential::from_readers(
        opt,
        before.text().as_bytes(),
        after.text().as_bytes(),
        &mut lines,
    )
    .ok()?;
    let lines = String::from_utf8(lines).ok()?;
    render(&mut options(title, subtitle, kind), &lines)
}

/// The SVG's height in pixels (its root's `height`), for the frame it is shown in.
fn height(svg: &str) -> usize {
    let root = svg.find("<svg").map_or("", |i| &svg[i..]);
    let root = &root[..root.find('>').unwrap_or(root.len())];
    root.split_once(" height=\"")
        .and_then(|(_, rest)| rest.split('"').next())
        .and_then(|h| h.parse::<f64>().ok())
        .map_or(600, |h| h.ceil() as usize)
}

/// The SVG in an HTML page: an object holding it as a data URI (its own document, so its
/// styles and script touch nothing else of the page).
pub(crate) fn embed(svg: &str, label: &str) -> String {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(svg);
    format!(
        "<object class=\"flame\" type=\"image/svg+xml\" aria-label=\"{}\" style=\"width:100%;height:{}px\" data=\"data:image/svg+xml;base64,{data}\"></object>",
        super::markup::esc(label),
        height(svg)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(text: &str) -> Folded {
        Folded::parse(text).0
    }

    #[test]
    fn a_flame_graph_names_its_frames_and_a_differential_colours_the_change() {
        let before = folded("fsbench;a;shmem_write_begin_[k] 80\nfsbench;a;memcpy_[k] 20\n");
        let after = folded("fsbench;a;btrfs_file_write_iter_[k] 70\nfsbench;a;memcpy_[k] 30\n");
        let svg = flame(&after, Kind::OnCpu, "btrfs randwrite", "12 samples").unwrap();
        assert!(svg.contains("btrfs_file_write_iter"), "frames are named");
        assert!(svg.contains("btrfs randwrite"));
        let diff = differential(&before, &after, Kind::OnCpu, "btrfs vs tmpfs", "").unwrap();
        assert!(diff.contains("btrfs_file_write_iter"));
        // A frame that grew is drawn red, one that shrank blue.
        assert!(diff.contains("rgb(255,"), "some frame is red");
        assert!(flame(&Folded::default(), Kind::OnCpu, "x", "").is_none());
        let html = embed(&svg, "btrfs <randwrite>");
        assert!(html.starts_with("<object") && html.contains("btrfs &lt;randwrite&gt;"));
        assert!(!html.contains("http://") && !html.contains("src="));
        assert!(height(&svg) > 16);
    }
}
