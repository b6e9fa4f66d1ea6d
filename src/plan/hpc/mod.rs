//! IOR's and mdtest's own command lines (`--workload 'ior:-w -r -F -t 4m'`), read once into a
//! typed plan. The words are split as a shell splits them; the options are read as the tools'
//! own parser reads them: flags grouped (`-wr`, `-vv`), a value attached (`-t4m`), after `=`
//! (`-t=4m`, `--posix.odirect=1`) or as the next word, long options (`--random-seed 7`), IOR's
//! `-O key=value,...` directives by their names. Each tool has one table, a row per option
//! (`ior::OPTIONS`, `mdtest::OPTIONS`): its names, whether it takes a value, what it does to the
//! plan, or why fsbench refuses it. An option of neither kind is refused by name, and nothing
//! runs.

pub mod ior;
pub mod mdtest;

use super::PlanError;

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// A flag: each time given adds one (IOR's `-vv`, `-zz`); `-F=0` sets the count.
    Flag,
    Value,
}

/// What an option given once does to the plan `P`.
pub type Apply<P> = fn(&mut P, &Given) -> Result<(), String>;

/// What fsbench does with an option.
pub enum Does<P: 'static> {
    Sets(Apply<P>),
    /// Refused before anything runs: what fsbench does not do (the reason, said after the
    /// option's name).
    Refused(&'static str),
}

/// One option of a tool: its names, its value, what it does, and its help.
pub struct Opt<P: 'static> {
    pub short: Option<char>,
    pub long: Option<&'static str>,
    /// IOR's name for it in `-O name=value` (case-insensitive).
    pub directive: Option<&'static str>,
    pub arg: Arg,
    pub help: &'static str,
    pub does: Does<P>,
}

impl<P> Opt<P> {
    /// How the option is written (`-t`, `--posix.odirect`, `-O stoneWallingWearOut`).
    pub fn name(&self) -> String {
        match (self.short, self.long, self.directive) {
            (Some(c), _, _) => format!("-{c}"),
            (None, Some(l), _) => format!("--{l}"),
            (None, None, Some(d)) => format!("-O {d}"),
            (None, None, None) => "?".into(),
        }
    }
}

/// A row for an option that sets part of the plan, its names given by the builders below.
const fn sets<P>(arg: Arg, help: &'static str, f: Apply<P>) -> Opt<P> {
    Opt {
        short: None,
        long: None,
        directive: None,
        arg,
        help,
        does: Does::Sets(f),
    }
}

/// By its letter (`-n`).
pub const fn short<P>(c: char, arg: Arg, help: &'static str, f: Apply<P>) -> Opt<P> {
    Opt {
        short: Some(c),
        ..sets(arg, help, f)
    }
}

/// By its letter and IOR's directive name (`-t`, `-O transferSize=4m`).
pub const fn named<P>(
    c: char,
    directive: &'static str,
    arg: Arg,
    help: &'static str,
    f: Apply<P>,
) -> Opt<P> {
    Opt {
        short: Some(c),
        directive: Some(directive),
        ..sets(arg, help, f)
    }
}

/// By its long name (`--posix.odirect`).
pub const fn long<P>(name: &'static str, arg: Arg, help: &'static str, f: Apply<P>) -> Opt<P> {
    Opt {
        long: Some(name),
        ..sets(arg, help, f)
    }
}

/// By IOR's directive name alone (`-O stoneWallingWearOut=1`).
pub const fn directive<P>(name: &'static str, help: &'static str, f: Apply<P>) -> Opt<P> {
    Opt {
        directive: Some(name),
        ..sets(Arg::Value, help, f)
    }
}

/// A row for an option fsbench refuses, and why.
pub const fn refused<P>(
    short: Option<char>,
    long: Option<&'static str>,
    help: &'static str,
    arg: Arg,
    why: &'static str,
) -> Opt<P> {
    Opt {
        short,
        long,
        directive: None,
        arg,
        help,
        does: Does::Refused(why),
    }
}

/// Sets an option's slot of the plan.
pub fn set<T>(slot: &mut T, v: T) -> Result<(), String> {
    *slot = v;
    Ok(())
}

/// Whether a flag was given.
pub fn on(g: &Given) -> Result<bool, String> {
    Ok(g.count(0)? > 0)
}

/// An option as given: its name as written, and its value (a flag's is None unless `=N`).
pub struct Given<'a> {
    pub name: String,
    pub value: Option<&'a str>,
}

impl Given<'_> {
    fn bad(&self, what: impl std::fmt::Display) -> String {
        format!("{} {}: {what}", self.name, self.value.unwrap_or_default())
    }

    /// A flag's new count: one more, or the `=N` it was given.
    pub fn count(&self, now: u32) -> Result<u32, String> {
        match self.value {
            None => Ok(now + 1),
            Some(v) => v
                .trim()
                .parse::<i64>()
                .map(|n| n.max(0) as u32)
                .map_err(|_| self.bad("is not a whole number")),
        }
    }

    pub fn text(&self) -> Result<String, String> {
        self.value
            .map(str::to_string)
            .ok_or_else(|| self.bad("needs a value"))
    }

    /// A size as the tools write it: a whole number with an optional k, m, g, t or p (binary).
    pub fn bytes(&self) -> Result<u64, String> {
        let v = self.value.unwrap_or_default().trim();
        let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
        let (num, unit) = v.split_at(split);
        let shift = match unit.to_ascii_lowercase().as_str() {
            "" => 0,
            "k" => 10,
            "m" => 20,
            "g" => 30,
            "t" => 40,
            "p" => 50,
            _ => return Err(self.bad(
                "is not a size: write a whole number with an optional k, m, g, t or p (e.g. 4m)",
            )),
        };
        num.parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(1 << shift))
            .ok_or_else(|| self.bad("is not a size: write a whole number with an optional k, m, g, t or p (e.g. 4m)"))
    }

    /// A whole number (a size suffix allowed, as the tools read every number).
    pub fn number(&self) -> Result<u64, String> {
        self.bytes()
    }

    /// A signed whole number (a seed).
    pub fn signed(&self) -> Result<i64, String> {
        self.value
            .unwrap_or_default()
            .trim()
            .parse()
            .map_err(|_| self.bad("is not a whole number"))
    }
}

/// The words of a command line as a shell splits them: blanks separate, quotes ('' and "")
/// group, a backslash takes the next character as it is.
pub fn words(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                let n = chars.next().ok_or("a backslash ends the command line")?;
                word.get_or_insert_with(String::new).push(n);
            }
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => out.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if let Some(q) = quote {
        return Err(format!("a {q} quote is not closed"));
    }
    out.extend(word);
    Ok(out)
}

/// Reads `words` with `table` into `plan`. `tool` names the tool in messages. A refused or
/// unknown option, a missing or bad value: one message naming the option and the fix.
pub fn parse<P>(
    tool: &str,
    words: &[String],
    table: &'static [Opt<P>],
    plan: &mut P,
) -> Result<(), PlanError> {
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        let body = word.strip_prefix('-').ok_or_else(|| {
            PlanError(format!(
                "{tool}: '{word}' is not an option (options start with -)"
            ))
        })?;
        let (body, eq) = match body.split_once('=') {
            Some((b, v)) => (b, Some(v)),
            None => (body, None),
        };
        if let Some(long) = body.strip_prefix('-') {
            let o = find(table, |o| o.long == Some(long)).ok_or_else(|| unknown(tool, word))?;
            let value = match (o.arg, eq) {
                (Arg::Value, None) => {
                    i += 1;
                    Some(next(tool, words, i - 1, &format!("--{long}"))?)
                }
                (_, v) => v,
            };
            apply(tool, o, format!("--{long}"), value, plan)?;
            continue;
        }
        // Short options, grouped; one that takes a value takes the rest of the word, or the
        // next word.
        let mut rest = body;
        while let Some(c) = rest.chars().next() {
            rest = &rest[c.len_utf8()..];
            let o = find(table, |o| o.short == Some(c))
                .ok_or_else(|| unknown(tool, &format!("-{c}")))?;
            let name = format!("-{c}");
            match o.arg {
                Arg::Flag => {
                    let value = eq.filter(|_| rest.is_empty());
                    apply(tool, o, name, value, plan)?;
                }
                Arg::Value => {
                    let value = match (rest.is_empty(), eq) {
                        (false, _) => rest,
                        (true, Some(v)) => v,
                        (true, None) => {
                            i += 1;
                            next(tool, words, i - 1, &name)?
                        }
                    };
                    if c == 'O' {
                        directives(tool, table, value, plan)?;
                    } else {
                        apply(tool, o, name, Some(value), plan)?;
                    }
                    break;
                }
            }
        }
    }
    Ok(())
}

fn find<P>(table: &'static [Opt<P>], by: impl Fn(&Opt<P>) -> bool) -> Option<&'static Opt<P>> {
    table.iter().find(|o| by(o))
}

fn next<'a>(tool: &str, words: &'a [String], i: usize, name: &str) -> Result<&'a str, PlanError> {
    words
        .get(i)
        .map(String::as_str)
        .ok_or_else(|| PlanError(format!("{tool}: {name} needs a value")))
}

fn unknown(tool: &str, name: &str) -> PlanError {
    PlanError(format!(
        "{tool}: '{name}' is not an option of {tool}'s that fsbench knows (fsbench list shows the options it takes)"
    ))
}

fn apply<P>(
    tool: &str,
    o: &Opt<P>,
    name: String,
    value: Option<&str>,
    plan: &mut P,
) -> Result<(), PlanError> {
    match &o.does {
        Does::Refused(why) => Err(PlanError(format!(
            "{tool}: {name} ({}) is refused: {why}; nothing was run",
            o.help
        ))),
        Does::Sets(f) => {
            f(plan, &Given { name, value }).map_err(|e| PlanError(format!("{tool}: {e}")))
        }
    }
}

/// IOR's `-O name=value[,name=value...]`: each directive applied as the option of that name.
fn directives<P>(
    tool: &str,
    table: &'static [Opt<P>],
    text: &str,
    plan: &mut P,
) -> Result<(), PlanError> {
    for d in text.split(',') {
        let Some((k, v)) = d.split_once('=') else {
            return Err(PlanError(format!(
                "{tool}: -O {d}: a directive is name=value (e.g. -O stoneWallingWearOut=1)"
            )));
        };
        let (k, v) = (k.trim(), v.trim());
        let o = find(table, |o| o.directive.is_some_and(|n| n.eq_ignore_ascii_case(k)))
            .ok_or_else(|| PlanError(format!(
                "{tool}: -O {k}: not a directive fsbench knows (fsbench list shows the options it takes); nothing was run"
            )))?;
        apply(tool, o, format!("-O {k}"), Some(v), plan)?;
    }
    Ok(())
}

/// A path the tool is given (-o, -d, a status file) as fsbench takes it: relative to the
/// target's directory, within it.
pub fn inside(option: &str, path: &str) -> Result<String, String> {
    let p = std::path::Path::new(path);
    if p.is_absolute() {
        return Err(format!(
            "{option} {path}: give a path relative to the target (fsbench runs the tool in each target's directory), e.g. {option} {}",
            p.file_name().map(|f| f.to_string_lossy()).unwrap_or_default()
        ));
    }
    if path.is_empty()
        || p.components().any(|c| {
            !matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
    {
        return Err(format!(
            "{option} {path}: the path must stay inside the target (no '..')"
        ));
    }
    Ok(path.to_string())
}

/// Each tool's options for `fsbench list`: the workload's name and a line per option.
pub fn tools() -> [(&'static str, Vec<(String, String)>); 2] {
    [
        ("ior", lines(ior::OPTIONS)),
        ("mdtest", lines(mdtest::OPTIONS)),
    ]
}

/// One line per option of `table`: its names and what fsbench does.
fn lines<P>(table: &'static [Opt<P>]) -> Vec<(String, String)> {
    table
        .iter()
        .map(|o| {
            let mut names = Vec::new();
            if let Some(c) = o.short {
                names.push(format!("-{c}"));
            }
            if let Some(l) = o.long {
                names.push(format!("--{l}"));
            }
            if let Some(d) = o.directive {
                names.push(format!("-O {d}="));
            }
            let help = match &o.does {
                Does::Sets(_) => o.help.to_string(),
                Does::Refused(why) => format!("{} (refused: {why})", o.help),
            };
            (names.join(", "), help)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_as_a_shell_does() {
        assert_eq!(
            words(r#"-w  -t 4m -o 'a b' "c\"d" e\ f"#).unwrap(),
            ["-w", "-t", "4m", "-o", "a b", "c\"d", "e f"]
        );
        assert_eq!(words("").unwrap(), Vec::<String>::new());
        assert_eq!(words("''").unwrap(), [""]);
        assert!(words("-o 'a").unwrap_err().contains("not closed"));
    }
}
