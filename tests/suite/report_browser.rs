//! The HTML report in a real headless Chromium: it loads offline, the charts render, nothing is
//! fetched, and a screenshot is saved to the target directory (tmp/report-screenshot.png) for people to look at;
//! iozone's heat maps too (tmp/iozone-one.png, tmp/iozone-two.png).

use crate::common::*;

#[test]
fn the_html_report_renders_in_headless_chromium_without_network() {
    let Some(chromium) = chromium() else {
        skip(true, "no chromium (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let study = copy_fixture_study(dir.path());
    // Long target labels, the kind that overlapped before.
    let text = std::fs::read_to_string(study.join("results.jsonl")).unwrap();
    std::fs::write(
        study.join("results.jsonl"),
        text.replace(
            "\"target\":\"ext4\"",
            "\"target\":\"zfs:recordsize=128k,primarycache=metadata\"",
        )
        .replace(
            "\"target\":\"xfs\"",
            "\"target\":\"btrfs:compress=zstd,autodefrag,label=btrfs-zstd-ad\"",
        ),
    )
    .unwrap();
    let o = run(&["report", study.to_str().unwrap(), "--format", "html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = dir.path().join("report.html");
    std::fs::write(&html, &o.stdout).unwrap();
    let text = stdout(&o);
    assert!(
        !text.contains("http://") && !text.contains("https://") && !text.contains("src="),
        "the report refers to something outside itself"
    );
    let url = format!("file://{}", html.display());
    let profile = dir.path().join("profile");
    let attr = page(chromium, &url, &profile);
    let charts: usize = attr("data-charts").parse().unwrap_or(0);
    // The ratio heat-map, a chart per test (block, files write, files read), a latency CDF,
    // per-second lines and the files trend for write and read.
    assert!(charts >= 7, "only {charts} charts rendered");
    // The page's own check: no text of a chart overlaps another, no chart overlaps another,
    // every chart has an axis label.
    assert_eq!(
        attr("data-overlaps"),
        "0",
        "overlapping labels: {}",
        attr("data-overlap-list")
    );
    assert_eq!(attr("data-unlabelled"), "0", "charts without an axis label");
    // (Cargo's directory for integration tests' files, wherever the target directory is.)
    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    screenshot(chromium, &url, &profile, &shot);
}

const BASE: [&str; 6] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--virtual-time-budget=3000",
    "--window-size=1200,4000",
];

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| have(c))
}

/// The page loaded in Chromium: its body's data attributes (the page's own check) by name.
fn page(chromium: &str, url: &str, profile: &std::path::Path) -> impl Fn(&str) -> String {
    let dom = std::process::Command::new(chromium)
        .args(BASE)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    let body = dom
        .split("<body")
        .nth(1)
        .and_then(|b| b.split('>').next())
        .unwrap_or_default()
        .to_string();
    assert!(
        body.contains("data-ready=\"1\""),
        "the page script did not run: {body}"
    );
    assert!(
        body.contains("data-external=\"0\""),
        "the page fetched something: {body}"
    );
    move |name: &str| {
        body.split(&format!("{name}=\""))
            .nth(1)
            .and_then(|x| x.split('"').next())
            .unwrap_or("missing")
            .to_string()
    }
}

/// A screenshot of the page at `shot`, for people to look at.
fn screenshot(chromium: &str, url: &str, profile: &std::path::Path, shot: &std::path::Path) {
    let _ = std::fs::remove_file(shot);
    let o = std::process::Command::new(chromium)
        .args(BASE)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--hide-scrollbars")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let png = std::fs::read(shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "screenshot"
    );
}

/// iozone's heat maps, for one target (throughput) and for two (the baseline's throughput and
/// the other's ratio to it): every map is a labelled chart, no label overlaps another, and the
/// screenshots are saved (tmp/iozone-one.png, tmp/iozone-two.png).
#[test]
fn iozone_heat_maps_render_without_overlaps() {
    let Some(chromium) = chromium() else {
        skip(true, "no chromium (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, maps) in [("iozone-one", 6), ("iozone-two", 12)] {
        let study = dir.path().join(name);
        std::fs::create_dir(&study).unwrap();
        let from = std::path::Path::new("tests/fixtures/studies").join(name);
        for f in ["manifest.json", "results.jsonl"] {
            std::fs::copy(from.join(f), study.join(f)).unwrap();
        }
        let o = run(&["report", study.to_str().unwrap(), "--format", "html"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let html = dir.path().join(format!("{name}.html"));
        std::fs::write(&html, &o.stdout).unwrap();
        let url = format!("file://{}", html.display());
        let attr = page(chromium, &url, &dir.path().join("profile"));
        let charts: usize = attr("data-charts").parse().unwrap_or(0);
        assert!(
            charts >= maps,
            "{name}: {charts} charts, {maps} heat maps expected"
        );
        assert_eq!(
            attr("data-overlaps"),
            "0",
            "{name}: overlapping labels: {}",
            attr("data-overlap-list")
        );
        assert_eq!(
            attr("data-unlabelled"),
            "0",
            "{name}: a chart without an axis label"
        );
        let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.png"));
        screenshot(chromium, &url, &dir.path().join("profile"), &shot);
    }
}
