//! The house rules that keep the code readable, checked on the source itself:
//! - no import cycle between top-level modules (it prints each module's `use crate::X` list);
//! - no file in src/ over 700 lines, no function over 120 lines, main.rs under 80 lines;
//! - `unsafe` only in src/sys/ and src/engine/uring.rs (the crate denies it elsewhere);
//! - nothing tracked refers to the shared folder beside the repository (a user's clone lacks it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Top-level module of a file under src/ (None for lib.rs and main.rs).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    match first.as_str() {
        "lib.rs" | "main.rs" => None,
        f => Some(f.trim_end_matches(".rs").to_string()),
    }
}

/// `crate::X` names in a file's text (code only: comments are skipped).
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + 7..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
            rest = after;
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let Some(m) = module_of(&src, &f) else {
            continue;
        };
        let refs = crate_refs(&std::fs::read_to_string(&f).unwrap());
        let deps = g.entry(m.clone()).or_default();
        deps.extend(refs.into_iter().filter(|r| *r != m));
    }
    g
}

/// A cycle through the graph, if there is one (depth-first search with a path stack).
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            match state.get(d.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = path.iter().position(|p| p == d).unwrap();
                    let mut c = path[at..].to_vec();
                    c.push(d.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(d, g, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let g = graph();
    for (m, deps) in &g {
        let list: Vec<&str> = deps.iter().map(String::as_str).collect();
        println!("{m} -> {}", list.join(" "));
    }
    if let Some(c) = find_cycle(&g) {
        panic!("import cycle between top-level modules: {}", c.join(" -> "));
    }
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(find_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert!(find_cycle(&g).is_none());
    assert_eq!(
        crate_refs("use crate::io::{self}; // crate::report\nlet x = crate::stop::requested();"),
        ["io", "stop"].iter().map(|s| s.to_string()).collect()
    );
}

/// (length in lines, name) of every function with a body: from its `fn` line to the closing
/// brace at the same indentation.
fn functions(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let t = l.trim_start();
        let indent = &l[..l.len() - t.len()];
        let t2 = t
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ")
            .trim_start_matches("const ")
            .trim_start_matches("unsafe ");
        if let Some(rest) = t2.strip_prefix("fn ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let mut j = i;
            while j < lines.len() && !lines[j].trim_end().ends_with('{') {
                if lines[j].trim_end().ends_with(';') {
                    break;
                }
                j += 1;
            }
            if j < lines.len() && lines[j].trim_end().ends_with('{') {
                let close = format!("{indent}}}");
                let mut k = j + 1;
                while k < lines.len() && lines[k].trim_end() != close {
                    k += 1;
                }
                out.push((k - i + 1, name));
                i = j;
            }
        }
        i += 1;
    }
    out
}

#[test]
fn files_and_functions_stay_short() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        let n = text.lines().count();
        if n > 700 {
            bad.push(format!("{rel}: {n} lines (at most 700)"));
        }
        for (len, name) in functions(&text) {
            if len > 120 {
                bad.push(format!("{rel}: fn {name} is {len} lines (at most 120)"));
            }
        }
    }
    let main = std::fs::read_to_string(src.join("main.rs")).unwrap();
    if main.lines().count() >= 80 {
        bad.push(format!(
            "src/main.rs: {} lines (wiring only: under 80)",
            main.lines().count()
        ));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert_eq!(
        functions("fn a() {\n    x;\n}\n    pub fn b(\n        y: u8,\n    ) {\n    }\n"),
        [(3, "a".to_string()), (4, "b".to_string())]
    );
}

#[test]
fn unsafe_lives_in_the_system_layer_only() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("#![deny(unsafe_code)]"),
        "src/lib.rs must deny unsafe_code"
    );
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        if text.contains("allow(unsafe_code)") {
            assert!(
                rel.starts_with("sys/") || rel == "engine/uring.rs" || rel == "lib.rs",
                "{rel} allows unsafe code: only the system layer may"
            );
        }
    }
}

#[test]
fn nothing_tracked_refers_outside_the_repository() {
    let o = std::process::Command::new("git")
        .args(["ls-files"])
        .current_dir(root())
        .output();
    let Some(o) = o.ok().filter(|o| o.status.success()) else {
        eprintln!("SKIPPED: not a git checkout (git ls-files failed)");
        return;
    };
    let needle = ["..", "/shared"].concat();
    let mut bad = Vec::new();
    for f in String::from_utf8_lossy(&o.stdout).lines() {
        if let Ok(text) = std::fs::read_to_string(root().join(f)) {
            if text.contains(&needle) {
                bad.push(f.to_string());
            }
        }
    }
    assert!(bad.is_empty(), "these refer to {needle}: {bad:?}");
}
