//! The house rules that keep the code readable, checked on the source itself:
//! - no import cycle between top-level modules (it prints each module's `use crate::X` list);
//! - no file in src/ over 700 lines, no function over 120 lines (over 60 in the phase frame,
//!   src/frame/, outside its tests), main.rs under 80 lines;
//! - `unsafe` only in src/sys/ (the crate denies it elsewhere);
//! - printing only in src/out.rs (std's print macros panic on a closed or full output);
//! - nothing tracked refers to the shared folder beside the repository (a user's clone lacks it);
//! - a test that looks at its host and returns says why (`common::skip`: `SKIPPED: why`).

use crate::common::graph::find_cycle;

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
        // The frame's steps are what every phase of every workload goes through: each reads
        // on one screen, a new concern a row of its tables (frame/probe.rs).
        let most = if rel.starts_with("src/frame/") && !rel.ends_with("tests.rs") {
            60
        } else {
            120
        };
        for (len, name) in functions(&text) {
            if len > most {
                bad.push(format!("{rel}: fn {name} is {len} lines (at most {most})"));
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
                rel.starts_with("sys/") || rel == "lib.rs",
                "{rel} allows unsafe code: only the system layer may"
            );
        }
    }
}

/// The print macros `code` calls (std's: `println!`, `eprintln!`, `print!`, `eprint!`, `dbg!`).
fn print_macros(code: &str) -> Vec<&'static str> {
    ["println!", "eprintln!", "print!", "eprint!", "dbg!"]
        .into_iter()
        .filter(|m| {
            code.match_indices(m).any(|(i, _)| {
                !code[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
        .collect()
}

#[test]
fn only_the_printing_module_prints() {
    assert_eq!(print_macros("a(); eprintln!(\"x\");"), ["eprintln!"]);
    assert!(print_macros("crate::out::eline!(\"x\"); eprint_table();").is_empty());
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        if rel == "out.rs" {
            continue;
        }
        let found = print_macros(&code_of(&f));
        assert!(
            found.is_empty(),
            "{rel} calls {}: print through crate::out (out::print, out::line, out::eline!), which a closed or full output does not panic",
            found.join(", ")
        );
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

/// A file's module path under src/: `src/plan/fio/values.rs` is `plan::fio::values`, a `mod.rs`
/// is its folder's module (None for lib.rs and main.rs).
fn module_path(src: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    match last.as_str() {
        "lib.rs" | "main.rs" if parts.is_empty() => return None,
        "mod.rs" => {}
        l => parts.push(l.trim_end_matches(".rs").to_string()),
    }
    Some(parts)
}

/// The paths a file names from the crate: `crate::a::b`, `super::c`, `self::d`, and the
/// members of `use ...::{x, y::z}` groups, each as module path components from the crate root.
fn named_paths(text: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let b = code.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !word(b[i - 1]) && b[i - 1] != b':';
        if !boundary
            || !["crate::", "super::", "self::"]
                .iter()
                .any(|p| b[i..].starts_with(p.as_bytes()))
        {
            i += 1;
            continue;
        }
        // The path: words joined by ::, possibly ending in a {group}.
        let mut j = i;
        let mut segs: Vec<String> = Vec::new();
        let mut group = String::new();
        loop {
            let start = j;
            while j < b.len() && word(b[j]) {
                j += 1;
            }
            if j > start {
                segs.push(code[start..j].to_string());
            }
            if b.get(j) == Some(&b':') && b.get(j + 1) == Some(&b':') {
                j += 2;
                if b.get(j) == Some(&b'{') {
                    let open = j;
                    let mut depth = 0;
                    while j < b.len() {
                        match b[j] {
                            b'{' => depth += 1,
                            b'}' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    group = code[open + 1..j.min(b.len())].to_string();
                    break;
                }
                continue;
            }
            break;
        }
        let mut base: Vec<String> = Vec::new();
        let mut rest = segs.as_slice();
        match rest.first().map(String::as_str) {
            Some("crate") => rest = &rest[1..],
            Some("self") => {
                base = here.to_vec();
                rest = &rest[1..];
            }
            Some("super") => {
                base = here.to_vec();
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            _ => {}
        }
        let mut full = base;
        full.extend(rest.iter().cloned());
        // Members of a group, one level (enough for `use crate::x::{a, b::c}`).
        for m in group.split(',') {
            let m: Vec<String> = m
                .trim()
                .split("::")
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty() && s.bytes().all(word))
                .collect();
            if !m.is_empty() && m[0] != "self" {
                let mut f = full.clone();
                f.extend(m);
                out.push(f);
            }
        }
        out.push(full);
        i = j.max(i + 1);
    }
    out
}

/// File-level imports: file -> the files whose items it names (its own submodules left out: a
/// parent declaring and using its children is a hierarchy, not a circle).
fn file_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut modules: BTreeMap<Vec<String>, String> = BTreeMap::new();
    for f in &files {
        if let Some(m) = module_path(&src, f) {
            modules.insert(m, f.strip_prefix(&src).unwrap().display().to_string());
        }
    }
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(here) = module_path(&src, f) else {
            continue;
        };
        let name = modules[&here].clone();
        let text = std::fs::read_to_string(f).unwrap();
        let deps = g.entry(name.clone()).or_default();
        for p in named_paths(&text, &here) {
            // The deepest module the path reaches.
            let mut target = None;
            for n in 1..=p.len() {
                if let Some(file) = modules.get(&p[..n]) {
                    target = Some((n, file));
                }
            }
            if let Some((n, file)) = target {
                let below_here = p[..n].starts_with(&here) && n > here.len();
                if *file != name && !below_here {
                    deps.insert(file.clone());
                }
            }
        }
    }
    g
}

/// Every circle of imports between files (each reported once, from its smallest member).
fn file_circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Strongly connected components (Tarjan), those with more than one file.
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn strong<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.g.contains_key(w) {
                continue;
            }
            if !t.index.contains_key(w) {
                strong(t, w);
                let lw = t.low[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(lw));
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            strong(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_import_circle_between_files() {
    let circles = file_circles(&file_graph());
    assert!(
        circles.is_empty(),
        "files that import each other in a circle:\n{}",
        circles
            .iter()
            .map(|c| c.join(" <-> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_file_graph_reads_paths_and_finds_circles() {
    let here = vec!["plan".to_string(), "jobopts".to_string()];
    let p = named_paths(
        "use super::jobvalues::{self, parse_size, x::y};\nlet a = crate::io::drive::run(); // crate::no\n",
        &here,
    );
    let s: Vec<String> = p.iter().map(|v| v.join("::")).collect();
    assert!(s.contains(&"plan::jobvalues".to_string()), "{s:?}");
    assert!(s.contains(&"plan::jobvalues::x::y".to_string()), "{s:?}");
    assert!(s.contains(&"io::drive::run".to_string()), "{s:?}");
    assert!(!s.iter().any(|x| x.contains("no")), "{s:?}");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a.rs".into()).or_default().insert("b.rs".into());
    g.entry("b.rs".into()).or_default().insert("a.rs".into());
    g.entry("c.rs".into()).or_default().insert("a.rs".into());
    assert_eq!(
        file_circles(&g),
        [vec!["a.rs".to_string(), "b.rs".to_string()]]
    );
}

/// The code of a file without its `#[cfg(test)]` items and without comments; empty for a
/// `tests.rs`.
fn code_of(file: &Path) -> String {
    if file.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    without_tests(&std::fs::read_to_string(file).unwrap())
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` without each `#[cfg(test)]` item: from the attribute to the `;` or the `}` that closes
/// the item's first brace (braces in string and character literals and comments do not count).
fn without_tests(text: &str) -> String {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(ATTR) {
        out.push_str(&rest[..i]);
        let b = rest.as_bytes();
        let (mut k, mut depth) = (i + ATTR.len(), 0usize);
        let end = loop {
            let Some(&c) = b.get(k) else { break b.len() };
            match c {
                b'"' => {
                    k += 1;
                    while k < b.len() && b[k] != b'"' {
                        k += if b[k] == b'\\' { 2 } else { 1 };
                    }
                }
                b'/' if b.get(k + 1) == Some(&b'/') => {
                    while k < b.len() && b[k] != b'\n' {
                        k += 1;
                    }
                }
                b'\'' if b.get(k + 2) == Some(&b'\'') => k += 2,
                b'\'' if b.get(k + 1) == Some(&b'\\') && b.get(k + 3) == Some(&b'\'') => k += 3,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break k + 1;
                    }
                }
                b';' if depth == 0 => break k + 1,
                _ => {}
            }
            k += 1;
        };
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Where `lit` (a quoted literal) stands as a comparison: beside `==` or `!=`, or as a match arm.
fn compared(code: &str, lit: &str) -> bool {
    code.match_indices(lit).any(|(i, _)| {
        let before = code[..i].trim_end();
        let after = code[i + lit.len()..].trim_start();
        before.ends_with("==")
            || before.ends_with("!=")
            || after.starts_with("==")
            || after.starts_with("!=")
            || after.starts_with("=>")
            || (after.starts_with('|') && !after.starts_with("||"))
    })
}

#[test]
fn filesystems_are_asked_by_capability_not_compared_by_name() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let names: Vec<String> = fsbench::provision::FILESYSTEMS
        .iter()
        .map(|d| format!("\"{}\"", d.schema.name))
        .collect();
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        if rel.starts_with("provision/") {
            continue;
        }
        let code = code_of(&f);
        for n in &names {
            if compared(&code, n) {
                bad.push(format!("{rel} compares a filesystem's name ({n})"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "ask provision::caps (or a target's caps) instead:\n{}",
        bad.join("\n")
    );
    assert!(compared("if fs == \"tmpfs\" {", "\"tmpfs\""));
    assert!(compared("match x { \"zfs\" => 1 }", "\"zfs\""));
    assert!(!compared("let p = dir.join(\"dir\");", "\"dir\""));
}

#[test]
fn test_items_are_left_out_wherever_they_stand() {
    let text = "a();\n#[cfg(test)]\nmod t {\n    fn f() { let s = \"}\"; let c = '{'; }\n}\nb();\n#[cfg(test)]\nmod more;\nc();\n";
    assert_eq!(without_tests(text), "a();\n\nb();\n\nc();\n");
}

/// Where a string literal equal to `name` stands in `code`, outside attributes (`#[serde(...)]`).
fn literal_lines(code: &str, name: &str) -> Vec<usize> {
    let lit = format!("\"{name}\"");
    code.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(&lit) && !l.trim_start().starts_with("#["))
        .map(|(i, _)| i + 1)
        .collect()
}

/// A metric is named through its constant (`metrics::name`), so renaming one is a compile error
/// and not a silently empty column. The catalogue's one-word names (iops, files, threads, bytes,
/// ...) are also parameter names, fio option values and JSON keys, and are left out; so are
/// fio's own JSON keys (report/fiojson.rs) and the note kinds (store/note.rs), which are texts
/// of their own that happen to match.
#[test]
fn metrics_are_named_by_their_constants_not_by_string_literals() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let exempt = ["metrics/name.rs", "report/fiojson.rs", "store/note.rs"];
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        if exempt.contains(&rel.as_str()) {
            continue;
        }
        let code = code_of(&f);
        for name in fsbench::metrics::name::ALL {
            for line in literal_lines(&code, name) {
                bad.push(format!("{rel}: \"{name}\" (code line {line})"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "name these metrics with crate::metrics::name's constants:\n{}",
        bad.join("\n")
    );
    assert_eq!(
        literal_lines("m.get(\"bytes_per_sec\")", "bytes_per_sec"),
        [1]
    );
    assert!(literal_lines("#[serde(rename = \"bytes_per_sec\")]", "bytes_per_sec").is_empty());
}

/// The I/O loop is one `impl Driver`, in one file: its parts are types of their own, each in
/// its file, and only the loop sees them all.
#[test]
fn the_io_loop_is_one_impl_in_one_file() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut holding = Vec::new();
    for f in files {
        let code = code_of(&f);
        if code.lines().any(|l| {
            let t = l.trim_start();
            t.starts_with("impl") && t.split(['<', '>', ' ', '{']).any(|w| w == "Driver")
        }) {
            holding.push(f.strip_prefix(&src).unwrap().display().to_string());
        }
    }
    assert_eq!(holding, ["io/drive.rs"], "impl Driver outside io/drive.rs");
}

/// Files outside src/plan/ whose code may name fio's options (the distinctive ones: with an
/// underscore), and why. The block workload applies a fio job to a target (its lowering, its
/// checks and notes in fio's words); elsewhere the code names what things do.
const FIO_NAMES_ALLOWED: &[(&str, &str)] = &[
    (
        "workload/block/",
        "the fio workload: a job lowered and applied to a target",
    ),
    ("workload/presets.rs", "the presets are fio jobs"),
    ("workload/aging.rs", "it builds block jobs"),
    ("report/fiojson.rs", "fio's JSON output shape"),
    (
        "cmd/run.rs",
        "fsbench run takes fio job files; its messages say fio's options",
    ),
    (
        "workload/files/session.rs",
        "a step of its own named end_fsync",
    ),
];

/// fio's option names stay in the plan (the job file, the option table, the fio-shaped Job)
/// and in the files listed above: the I/O loop, the engines, the system layer, the frame and
/// the reports name what things do, so that the next fio option is a row in the table and a
/// line of the lowering, not a branch deep in the loop. A listed file that no longer names one
/// is taken off the list.
#[test]
fn fio_option_names_stay_in_the_plan_and_the_block_workload() {
    let names: Vec<&str> = fsbench::plan::fio::options::all()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .filter(|n| n.contains('_'))
        .collect();
    assert!(names.len() > 100, "{}", names.len());
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let (mut bad, mut used) = (Vec::new(), BTreeSet::new());
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        // The plan, and the tests (a folder of them is a module's tests.rs).
        if rel.starts_with("plan/") || rel.contains("/tests/") {
            continue;
        }
        let code = code_of(&f);
        let named: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| word_in(&code, n))
            .collect();
        if named.is_empty() {
            continue;
        }
        match FIO_NAMES_ALLOWED.iter().find(|a| rel.starts_with(a.0)) {
            Some(a) => {
                used.insert(a.0);
            }
            None => bad.push(format!("{rel}: {}", named.join(", "))),
        }
    }
    assert!(
        bad.is_empty(),
        "fio option names outside src/plan/:\n{}",
        bad.join("\n")
    );
    let stale: Vec<&str> = FIO_NAMES_ALLOWED
        .iter()
        .map(|a| a.0)
        .filter(|a| !used.contains(a))
        .collect();
    assert!(
        stale.is_empty(),
        "listed but naming no fio option: {stale:?}"
    );
    assert!(word_in("let x = job.rate_iops;", "rate_iops"));
    assert!(!word_in("let x = job.rate_iops_max;", "rate_iops"));
}

/// Whether `word` stands in `code` as a whole word (not part of a longer name).
fn word_in(code: &str, word: &str) -> bool {
    let w = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(word).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + word.len()..].chars().next();
        !before.is_some_and(w) && !after.is_some_and(w)
    })
}

/// The top-level modules of src/: its folders and files (main.rs among them, lib.rs not).
fn src_modules() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root().join("src"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "lib.rs")
        .map(|n| n.trim_end_matches(".rs").to_string())
        .collect();
    out.sort();
    out
}

/// The modules docs/architecture.md's layer list names, top first.
fn layers() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let after = text
        .split("\n## Layers\n")
        .nth(1)
        .expect("a Layers section");
    let block = after.split("```").nth(1).expect("the layer list");
    block
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_lowercase()))
        .filter_map(|l| l.split_whitespace().next())
        .map(|w| w.trim_end_matches('/').trim_end_matches(".rs").to_string())
        .collect()
}

/// docs/architecture.md's layer list is the code's: every module of src/ and no other, each
/// importing only modules below it (main.rs, the binary's wiring, imports any).
#[test]
fn the_layer_list_names_every_module_and_each_imports_only_those_below() {
    let listed = layers();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        src_modules(),
        "docs/architecture.md's layers: {listed:?}"
    );
    let at = |m: &str| listed.iter().position(|x| x == m);
    let mut up = Vec::new();
    for (m, deps) in graph() {
        for d in &deps {
            if at(d) <= at(&m) {
                up.push(format!("{m} imports {d}, listed above it"));
            }
        }
    }
    assert!(up.is_empty(), "{}", up.join("\n"));
}

/// Every file the README and docs/ name exists: paths from the repository's root (src/,
/// tests/, scripts/, docs/) and from src/ (`io/drive.rs`, any module's). The changelog tells
/// history and names files as they were.
#[test]
fn every_file_the_docs_name_exists() {
    let mut docs = vec![root().join("README.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            docs.push(e.path());
        }
    }
    let modules = src_modules();
    let mut missing = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        for p in doc_paths(&text) {
            let first = p.split('/').next().unwrap_or("");
            let at = if modules.iter().any(|m| m == first) && p.ends_with(".rs") {
                root().join("src").join(&p)
            } else if ["src", "tests", "scripts", "docs", "studies", "bench"].contains(&first) {
                root().join(&p)
            } else {
                continue;
            };
            if !at.exists() {
                let name = doc.file_name().unwrap().to_string_lossy().into_owned();
                missing.push(format!("{name}: {p}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name files that do not exist:\n{}",
        missing.join("\n")
    );
    assert_eq!(
        doc_paths("see `io/drive.rs`, src/io/ and <x>/y"),
        ["io/drive.rs", "src/io"]
    );
}

/// The paths a text names: words of letters, digits, `_ . - /` with a `/` in them, not inside a
/// longer path or a URL, trailing dots and slashes left off.
fn doc_paths(text: &str) -> Vec<String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || "_.-/".contains(c);
    let mut out = Vec::new();
    for word in text.split(|c: char| !ok(c)) {
        let p = word.trim_end_matches(['.', '/', '-']);
        if p.contains('/')
            && !p.starts_with('/')
            && !p.starts_with('.')
            && !text.contains(&format!("://{p}"))
        {
            out.push(p.to_string());
        }
    }
    out
}

/// An I/O's direction is a `plan::dir::Dir` (and a value per direction a `PerDir`) from the plan
/// down to the system layer: no bool stands for it, no bool indexes a pair by it.
#[test]
fn no_direction_is_a_bool() {
    let src = root().join("src");
    let mut files = Vec::new();
    for d in ["io", "engine", "sys", "workload/block", "plan"] {
        rust_files(&src.join(d), &mut files);
    }
    let said = [
        "write: bool",
        "writes: bool",
        "read: bool",
        "write as usize",
        "usize::from(write)",
        "(write, file)",
        "sync_due: Option<bool>",
        "data_only: bool",
    ];
    let mut bad = Vec::new();
    for f in files {
        let code = std::fs::read_to_string(&f).unwrap();
        let code: String = code
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect();
        for s in said.iter().filter(|s| word_in(&code, s)) {
            bad.push(format!("{}: {s}", f.strip_prefix(&src).unwrap().display()));
        }
    }
    assert!(bad.is_empty(), "a direction as a bool:\n{}", bad.join("\n"));
}

/// The lines (1-based) where a test looks at its host (`is_root()`, `have(..)`,
/// `kernel_has(..)`, a path that `exists()`) in an `if` and returns without saying why: a skip
/// goes through `common::skip` (or prints `SKIPPED: why` before it returns).
fn silent_skips(code: &str) -> Vec<usize> {
    let lines: Vec<&str> = code.lines().collect();
    let looks = |l: &str| {
        let cond = l.trim_start().strip_prefix("if ").unwrap_or("");
        !cond.contains("skip(")
            && ["is_root()", "have(", "kernel_has(", ".exists()"]
                .iter()
                .any(|c| cond.contains(c))
    };
    let mut silent = Vec::new();
    for (i, _) in lines.iter().enumerate().filter(|(_, l)| looks(l)) {
        let block: Vec<&str> = lines[i + 1..].iter().take(4).copied().collect();
        let returns = block
            .iter()
            .position(|b| ["return;", "return None;"].contains(&b.trim()));
        if let Some(r) = returns {
            if !block[..r].iter().any(|b| b.contains("SKIPPED")) {
                silent.push(i + 1);
            }
        }
    }
    silent
}

#[test]
fn a_skipped_test_says_why() {
    let said = "    if skip(!is_root(), \"needs root\") {\n        return;\n    }\n    if !have(\"fio\") {\n        eprintln!(\"SKIPPED: no fio\");\n        return;\n    }\n";
    assert!(silent_skips(said).is_empty());
    let silent = "    let x = 1;\n    if !is_root() {\n        return;\n    }\n";
    assert_eq!(silent_skips(silent), vec![2]);
    let mut files = Vec::new();
    rust_files(&root().join("tests"), &mut files);
    rust_files(&root().join("src"), &mut files);
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let in_src = f.starts_with(root().join("src"));
        // In src/, only the tests (a tests.rs, a tests/ folder, or what follows #[cfg(test)]).
        let code = match text.find("#[cfg(test)]") {
            _ if !in_src || f.ends_with("tests.rs") || f.to_string_lossy().contains("/tests/") => {
                &text[..]
            }
            Some(at) => &text[at..],
            None => "",
        };
        let offset = text.len() - code.len();
        let first = text[..offset].lines().count();
        for n in silent_skips(code) {
            let rel = f.strip_prefix(root()).unwrap().display();
            bad.push(format!("{rel}:{}", first + n));
        }
    }
    assert!(
        bad.is_empty(),
        "a test returns without saying why (use common::skip):\n{}",
        bad.join("\n")
    );
}
