//! fio's job-file syntax below the options: comments, `include FILE`, `${VAR}` from the
//! environment, the keywords `$pagesize`, `$mb_memory` and `$ncpus`, and arithmetic in values
//! (`(4+4)k`, `size=8*$mb_memory`). Reading the host's figures is the caller's: `Host` carries
//! them, so this stays plain data.

use std::path::{Path, PathBuf};

/// The host's figures fio's keywords stand for.
#[derive(Debug, Clone, Copy)]
pub struct Host {
    pub pagesize: u64,
    pub mb_memory: u64,
    pub ncpus: u64,
}

/// One line of a job file after comments and includes: where it came from, and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub origin: String,
    pub n: usize,
    pub text: String,
    /// Read from an included file (which may not hold sections).
    pub included: bool,
}

impl Line {
    pub fn at(&self) -> String {
        format!("{}:{}", self.origin, self.n)
    }
}

/// Strips a comment: from any `;` (no fio value contains one; the HPC study's job file writes `direct = 1; ...`),
/// or from a `#` that starts the line or follows white space.
fn strip_comment(line: &str) -> &str {
    let b = line.as_bytes();
    for (i, c) in b.iter().enumerate() {
        if *c == b';' || (*c == b'#' && (i == 0 || b[i - 1].is_ascii_whitespace())) {
            return &line[..i];
        }
    }
    line
}

/// The most lines a job file may have with its includes read in.
const MAX_LINES: usize = 20_000;

/// The lines of a job file with its includes read in place (relative to the including file's
/// directory, nested up to 16 deep). `read` reads a file (a test passes its own).
pub fn lines(
    text: &str,
    origin: &str,
    dir: &Path,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Vec<Line>, Vec<String>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    expand_into(text, origin, dir, read, 0, &mut out, &mut errors);
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn expand_into(
    text: &str,
    origin: &str,
    dir: &Path,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
    depth: usize,
    out: &mut Vec<Line>,
    errors: &mut Vec<String>,
) {
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(file) = line
            .strip_prefix("include")
            .filter(|r| r.starts_with([' ', '\t']))
        {
            let file = file.trim();
            let path: PathBuf = dir.join(file);
            if depth >= 16 {
                errors.push(format!(
                    "{origin}:{n}: include {file}: includes nest more than 16 deep (a loop?)"
                ));
                continue;
            }
            // Files that include others several times multiply: a job file stays a job file.
            if out.len() > MAX_LINES || errors.len() > MAX_LINES {
                errors.push(format!(
                    "{origin}:{n}: include {file}: the job file grows past {MAX_LINES} lines with its includes (a file included over and over?)"
                ));
                return;
            }
            match read(&path) {
                Ok(t) if not_job_lines(&t).is_some() => errors.push(format!(
                    "{origin}:{n}: include {file}: {} is not a fio job file (its line {} is not an option line such as `bs=4k`); fsbench includes only job files and does not show the content of others",
                    path.display(),
                    not_job_lines(&t).unwrap_or(0)
                )),
                Ok(t) => {
                    let sub = path.parent().unwrap_or(dir).to_path_buf();
                    let before = out.len();
                    expand_into(
                        &t,
                        &path.display().to_string(),
                        &sub,
                        read,
                        depth + 1,
                        out,
                        errors,
                    );
                    for l in &mut out[before..] {
                        l.included = true;
                    }
                }
                Err(e) => errors.push(format!(
                    "{origin}:{n}: include {file}: cannot read {}: {e}",
                    path.display()
                )),
            }
            continue;
        }
        out.push(Line {
            origin: origin.to_string(),
            n,
            text: line.to_string(),
            included: depth > 0,
        });
    }
}

/// Whether a line (its comment stripped, trimmed) has a job file's shape: blank, `include FILE`,
/// a `[section]` header, or an option line (`key` or `key=value`, the key made of letters,
/// digits and `_`). A line without it is never echoed in errors: the file may be anything.
pub fn job_line(line: &str) -> bool {
    let key = line.split('=').next().unwrap_or("").trim();
    line.is_empty()
        || line.starts_with("include ")
        || line.starts_with("include\t")
        || (line.starts_with('[') && line.ends_with(']'))
        || (!key.is_empty()
            && key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// The first line (1-based) of an included file that is not a job file's line (`job_line`):
/// such a file is not a job file, and its lines are never echoed in errors.
fn not_job_lines(text: &str) -> Option<usize> {
    text.lines()
        .enumerate()
        .find_map(|(i, raw)| (!job_line(strip_comment(raw).trim())).then_some(i + 1))
}

/// Why a main job file is not one, if it is not: its first line that is neither blank, a
/// comment nor an include is not a `[section]` header (a job file starts with [global] or a
/// job), with its number. Nothing of the line is said.
pub fn not_a_job_file(text: &str) -> Option<usize> {
    text.lines().enumerate().find_map(|(i, raw)| {
        let line = strip_comment(raw).trim();
        let skip = line.is_empty() || line.starts_with("include ") || line.starts_with("include\t");
        match skip {
            true => None,
            false if line.starts_with('[') && line.ends_with(']') => Some(None),
            false => Some(Some(i + 1)),
        }
    })?
}

/// Keys whose values are names or text, never arithmetic.
fn verbatim(key: &str) -> bool {
    matches!(
        key,
        "name"
            | "description"
            | "filename"
            | "directory"
            | "verify_pattern"
            | "ioengine"
            | "rw"
            | "readwrite"
            | "bssplit"
            | "bsrange"
            | "blocksize_range"
            | "random_distribution"
            | "percentile_list"
            | "filesize"
    )
}

/// Time keys: a number from an expression is in microseconds (fio's rule).
fn is_time(key: &str) -> bool {
    matches!(key, "runtime" | "timeout" | "ramp_time" | "startdelay")
}

/// What an error about a value adds when `${VAR}`s in it were not set (empty when all were).
fn unset_note(unset: &[String]) -> String {
    match unset {
        [] => String::new(),
        vars => format!(
            " (${{{}}} is not set in the environment: export it, or write the value in the job file)",
            vars.join("}, ${")
        ),
    }
}

/// The note for an error about `value` (as written) when some of its `${VAR}`s are unset.
pub fn unset_vars_note(value: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut unset = Vec::new();
    let mut rest = value;
    while let Some(i) = rest.find("${") {
        let Some(end) = rest[i..].find('}') else {
            break;
        };
        let var = &rest[i + 2..i + end];
        if env(var).is_none() {
            unset.push(var.to_string());
        }
        rest = &rest[i + end + 1..];
    }
    unset_note(&unset)
}

/// A value with `${VAR}`, the keywords and arithmetic replaced. `env` looks a variable up.
pub fn substitute(
    key: &str,
    value: &str,
    host: &Host,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut s = String::with_capacity(value.len());
    let mut rest = value;
    // Unset variables are empty, as in fio; a value that is then empty or wrong names them.
    let mut unset = Vec::new();
    while let Some(i) = rest.find("${") {
        s.push_str(&rest[..i]);
        let Some(end) = rest[i..].find('}') else {
            return Err(format!("{key}={value}: '${{' without its closing '}}'"));
        };
        let var = &rest[i + 2..i + end];
        match env(var) {
            Some(v) => s.push_str(&v),
            None => unset.push(var.to_string()),
        }
        rest = &rest[i + end + 1..];
    }
    s.push_str(rest);
    let unset_note = unset_note(&unset);
    if s.trim().is_empty() && !unset.is_empty() {
        return Err(format!("{key}={value}: the value is empty{unset_note}"));
    }
    let mut keyword = false;
    for (word, n) in [
        ("$pagesize", host.pagesize),
        ("$mb_memory", host.mb_memory),
        ("$ncpus", host.ncpus),
    ] {
        while let Some(i) = find_word(&s, word) {
            s.replace_range(i..i + word.len(), &n.to_string());
            keyword = true;
        }
    }
    if let Some(i) = s.find('$') {
        return Err(format!(
            "{key}={value}: '{}' is not a substitution fsbench knows (${{VAR}}, $pagesize, $mb_memory, $ncpus)",
            &s[i..]
        ));
    }
    if verbatim(key) {
        return Ok(s);
    }
    arithmetic(key, &s, keyword).map_err(|e| format!("{key}={value}: {e}{unset_note}"))
}

/// Where `word` stands alone (not the start of a longer name).
fn find_word(s: &str, word: &str) -> Option<usize> {
    s.match_indices(word).map(|m| m.0).find(|&i| {
        !s[i + word.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Evaluates `( ... )` groups, and a bare expression when a keyword stood in it.
fn arithmetic(key: &str, s: &str, keyword: bool) -> Result<String, String> {
    let unit = if is_time(key) { "us" } else { "" };
    if !s.contains('(') {
        let body = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let suffix = &s[body.len()..];
        let has_op = body
            .trim_start_matches('-')
            .contains(['+', '-', '*', '/', '%', '^']);
        if keyword
            && has_op
            && body
                .chars()
                .all(|c| c.is_ascii_digit() || "+-*/%^. ".contains(c))
        {
            let v = eval(body)?;
            return Ok(format!(
                "{}{}",
                number(v),
                if suffix.is_empty() { unit } else { suffix }
            ));
        }
        return Ok(s.to_string());
    }
    let mut out = String::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'(' {
            out.push(b[i] as char);
            i += 1;
            continue;
        }
        let mut depth = 0;
        let mut j = i;
        while j < b.len() {
            match b[j] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        if j >= b.len() {
            return Err("'(' without its ')'".into());
        }
        let v = eval(&s[i + 1..j])?;
        out.push_str(&number(v));
        let next_is_unit = b.get(j + 1).is_some_and(|c| c.is_ascii_alphabetic());
        if !next_is_unit {
            out.push_str(unit);
        }
        i = j + 1;
    }
    Ok(out)
}

fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e18 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// + - * / % ^ and parentheses over numbers (^ binds tightest and to the right).
pub fn eval(expr: &str) -> Result<f64, String> {
    let toks: Vec<char> = expr.chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = Parser { t: &toks, i: 0 };
    let v = p.sum()?;
    if p.i != toks.len() {
        return Err(format!(
            "'{expr}' is not arithmetic fsbench can read (+ - * / % ^ and parentheses)"
        ));
    }
    if !v.is_finite() {
        return Err(format!(
            "'{expr}' does not give a number (division by zero?)"
        ));
    }
    Ok(v)
}

struct Parser<'a> {
    t: &'a [char],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.t.get(self.i).copied()
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            v = if op == '+' { v + r } else { v - r };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.power()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.i += 1;
            let r = self.power()?;
            v = match op {
                '*' => v * r,
                '/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.atom()?;
        if self.peek() == Some('^') {
            self.i += 1;
            return Ok(base.powf(self.power()?));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some('(') => {
                self.i += 1;
                let v = self.sum()?;
                if self.peek() != Some(')') {
                    return Err("'(' without its ')'".into());
                }
                self.i += 1;
                Ok(v)
            }
            Some('-') => {
                self.i += 1;
                Ok(-self.atom()?)
            }
            _ => {
                let start = self.i;
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
                    self.i += 1;
                }
                let s: String = self.t[start..self.i].iter().collect();
                s.parse::<f64>().map_err(|_| {
                    format!(
                        "expected a number at '{}'",
                        self.t[start..].iter().collect::<String>()
                    )
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: Host = Host {
        pagesize: 4096,
        mb_memory: 1024,
        ncpus: 2,
    };

    fn sub(key: &str, v: &str) -> Result<String, String> {
        substitute(key, v, &HOST, &|var| {
            (var == "SIZE").then(|| "64m".to_string())
        })
    }

    #[test]
    fn variables_keywords_and_arithmetic() {
        assert_eq!(sub("size", "${SIZE}").unwrap(), "64m");
        assert_eq!(sub("size", "${UNSET}1g").unwrap(), "1g");
        assert_eq!(sub("bs", "$pagesize").unwrap(), "4096");
        assert_eq!(sub("size", "8*$mb_memory").unwrap(), "8192");
        assert_eq!(sub("size", "2*$mb_memory M").unwrap(), "2048M");
        assert_eq!(sub("numjobs", "$ncpus").unwrap(), "2");
        assert_eq!(sub("bs", "(4+4)k").unwrap(), "8k");
        assert_eq!(sub("size", "(2^10*3)").unwrap(), "3072");
        assert_eq!(sub("iodepth", "(($ncpus*8)%5)").unwrap(), "1");
        assert_eq!(sub("runtime", "(2*1000000)").unwrap(), "2000000us");
        assert_eq!(sub("runtime", "(2*10)s").unwrap(), "20s");
        // Ranges and names are left alone.
        assert_eq!(sub("bsrange", "4096-8192").unwrap(), "4096-8192");
        assert_eq!(sub("filename", "/tmp/a(1)").unwrap(), "/tmp/a(1)");
        assert!(sub("size", "$pagesizes")
            .unwrap_err()
            .contains("not a substitution"));
        assert!(sub("size", "(4+").unwrap_err().contains("')'"));
        assert!(sub("size", "${SIZE").unwrap_err().contains("closing"));
        assert!(sub("size", "(1/0)").unwrap_err().contains("division"));
    }

    #[test]
    fn includes_read_in_place_and_name_their_file() {
        let read = |p: &Path| -> std::io::Result<String> {
            match p.to_str() {
                Some("/jobs/common.fio") => Ok("thread=1 ; shared\ninclude more/deep.fio\n".into()),
                Some("/jobs/more/deep.fio") => Ok("iodepth=4\n".into()),
                Some("/jobs/loop.fio") => Ok("include loop.fio\n".into()),
                _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
            }
        };
        let l = lines(
            "[global]\ninclude common.fio\n# c\n[a]\nrw=read\n",
            "main.fio",
            Path::new("/jobs"),
            &read,
        )
        .unwrap();
        let got: Vec<(String, bool)> = l
            .iter()
            .map(|l| (format!("{} {}", l.at(), l.text), l.included))
            .collect();
        assert_eq!(
            got,
            vec![
                ("main.fio:1 [global]".to_string(), false),
                ("/jobs/common.fio:1 thread=1".to_string(), true),
                ("/jobs/more/deep.fio:1 iodepth=4".to_string(), true),
                ("main.fio:4 [a]".to_string(), false),
                ("main.fio:5 rw=read".to_string(), false),
            ]
        );
        let e = lines("include missing.fio\n", "m.fio", Path::new("/jobs"), &read).unwrap_err();
        assert!(
            e[0].starts_with("m.fio:1: include missing.fio: cannot read /jobs/missing.fio"),
            "{e:?}"
        );
        let e = lines("include loop.fio\n", "m.fio", Path::new("/jobs"), &read).unwrap_err();
        assert!(e[0].contains("more than 16 deep"), "{e:?}");
    }

    #[test]
    fn an_included_file_that_is_not_a_job_file_is_refused_without_its_content() {
        let read = |p: &Path| -> std::io::Result<String> {
            match p.to_str() {
                Some("/etc/shadow") => Ok("root:$6$s3cr3t:20228:0:99999:7:::\n".into()),
                Some("/j/ok.fio") => Ok("# c\nbs=4k\nthread\ninclude ok2.fio\n".into()),
                Some("/j/ok2.fio") => Ok("iodepth=2\n".into()),
                _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
            }
        };
        let e = lines("include /etc/shadow\n", "m.fio", Path::new("/j"), &read).unwrap_err();
        assert!(
            e[0].contains("not a fio job file") && e[0].contains("line 1"),
            "{e:?}"
        );
        assert!(!e.join(" ").contains("s3cr3t") && !e.join(" ").contains("root"));
        assert!(lines("include ok.fio\n", "m.fio", Path::new("/j"), &read).is_ok());
    }

    #[test]
    fn a_file_included_over_and_over_stops_at_the_line_cap() {
        let read = |_: &Path| Ok("include x.fio\ninclude x.fio\nbs=4k\n".to_string());
        let e = lines("include x.fio\n", "m.fio", Path::new("/j"), &read).unwrap_err();
        assert!(e.iter().any(|m| m.contains("grows past")), "{:?}", &e[..1]);
    }

    #[test]
    fn an_unset_variable_that_leaves_a_value_empty_or_wrong_is_named() {
        let host = Host {
            pagesize: 4096,
            mb_memory: 1024,
            ncpus: 2,
        };
        let sub = |v: &str| substitute("size", v, &host, &|_| None);
        let e = sub("${SIZE}").unwrap_err();
        assert!(e.contains("${SIZE} is not set"), "{e}");
        let e = sub("${A}${B}").unwrap_err();
        assert!(e.contains("${A}, ${B}"), "{e}");
        assert_eq!(
            unset_vars_note("${X}k", &|_| None),
            " (${X} is not set in the environment: export it, or write the value in the job file)"
        );
    }
}
