//! The report's files import each other without a circle: a file of src/report/ that imports
//! another (by `crate::report::...`, `super::...`, or a child module's name) is never imported
//! back, directly or through others. A module declaring its children (`mod x;`) is not an import.
//! Code under `#[cfg(test)] mod tests {` at the end of a file is left out.

use crate::common::graph::find_cycle;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn report_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report")
}

/// Every .rs file under `dir` with its module path below the crate ("report::views::block").
fn modules(dir: &Path, path: &str, out: &mut BTreeMap<String, PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            modules(&p, &format!("{path}::{name}"), out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let m = if name == "mod" {
                path.to_string()
            } else {
                format!("{path}::{name}")
            };
            out.insert(m, p);
        }
    }
}

/// The code of a file: comments and a trailing unit-test module left out.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a file names (`a::b::c`, with `x::{y, z::w}` spread out), as segment lists.
fn paths(code: &str) -> Vec<Vec<String>> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !word(chars[i]) || (i > 0 && (word(chars[i - 1]) || chars[i - 1] == ':')) {
            i += 1;
            continue;
        }
        let mut segs: Vec<String> = Vec::new();
        let mut j = i;
        loop {
            let s: String = chars[j..].iter().take_while(|c| word(**c)).collect();
            j += s.chars().count();
            segs.push(s);
            if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
                j += 2;
                if chars.get(j) == Some(&'{') {
                    let end = chars[j..]
                        .iter()
                        .position(|c| *c == '}')
                        .map_or(j, |e| j + e);
                    let inner: String = chars[j + 1..end].iter().collect();
                    for item in inner.split(',') {
                        let mut p = segs.clone();
                        p.extend(
                            item.trim()
                                .split("::")
                                .filter(|s| !s.is_empty())
                                .map(String::from),
                        );
                        out.push(p);
                    }
                    j = end;
                    break;
                }
                continue;
            }
            break;
        }
        if segs.len() > 1 {
            out.push(segs);
        }
        i = j.max(i + 1);
    }
    out
}

/// The child modules a file declares (`mod x;`, `pub(crate) mod x;`).
fn children(code: &str) -> BTreeSet<String> {
    code.lines()
        .filter_map(|l| {
            let t = l.trim();
            let t = t.strip_prefix("pub(crate) ").unwrap_or(t);
            let t = t.strip_prefix("pub ").unwrap_or(t);
            t.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(|n| n.trim().to_string())
        })
        .collect()
}

/// The file modules each file of src/report/ imports.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = BTreeMap::new();
    modules(&report_dir(), "report", &mut files);
    let mut g = BTreeMap::new();
    for (m, f) in &files {
        let c = code(&std::fs::read_to_string(f).unwrap());
        let kids = children(&c);
        let mut deps = BTreeSet::new();
        for p in paths(&c) {
            let mut abs: Vec<String> = match p[0].as_str() {
                "crate" => p[1..].to_vec(),
                "super" => {
                    let mut base: Vec<String> = m.split("::").map(String::from).collect();
                    let mut rest = &p[..];
                    while rest.first().is_some_and(|s| s == "super") {
                        base.pop();
                        rest = &rest[1..];
                    }
                    base.extend(rest.iter().cloned());
                    base
                }
                "self" => m
                    .split("::")
                    .map(String::from)
                    .chain(p[1..].iter().cloned())
                    .collect(),
                k if kids.contains(k) => m
                    .split("::")
                    .map(String::from)
                    .chain(p.iter().cloned())
                    .collect(),
                _ => continue,
            };
            while !abs.is_empty() {
                let cand = abs.join("::");
                if files.contains_key(&cand) {
                    if &cand != m {
                        deps.insert(cand);
                    }
                    break;
                }
                abs.pop();
            }
        }
        g.insert(m.clone(), deps);
    }
    g
}

#[test]
fn no_import_circle_between_the_files_of_the_report() {
    let g = graph();
    for (m, deps) in &g {
        let list: Vec<&str> = deps.iter().map(String::as_str).collect();
        println!("{m} -> {}", list.join(" "));
    }
    assert!(g["report::views::block"].contains("report::view"));
    assert!(g["report"].contains("report::views"), "a child by its name");
    if let Some(c) = find_cycle(&g) {
        panic!("import circle in src/report/: {}", c.join(" -> "));
    }
}

#[test]
fn the_path_reader_finds_groups_and_relative_paths() {
    let p = paths("use super::{markup::esc, view::Grid};\nlet x = crate::report::svg::ticks(1.0);");
    let want: Vec<Vec<&str>> = vec![
        vec!["super", "markup", "esc"],
        vec!["super", "view", "Grid"],
        vec!["crate", "report", "svg", "ticks"],
    ];
    assert_eq!(p, want);
    assert_eq!(
        children("mod a;\npub(crate) mod b;\n#[cfg(test)]\nmod tests;"),
        ["a", "b", "tests"].iter().map(|s| s.to_string()).collect()
    );
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("a".into());
    assert!(find_cycle(&g).is_some());
}
