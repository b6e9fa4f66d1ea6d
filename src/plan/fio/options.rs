//! fio's options, one table: a row per option (its name, fio's other names for it, its family,
//! a line of help, an example value, and how it sets the fio-shaped `Job`), the rows of a family
//! in the family's file. `Job::apply` looks an option up and applies its row; `fsbench run
//! --help` lists the table. An option outside it is an error naming it. Where fio's options
//! depend on each other's order (a second `bs=`, `random_sequence_stride` before or after
//! `random_distribution=sequence`, `verify_pattern` before `verify=`), the rows say so and the
//! tests show it.

use std::time::Duration;

use super::values::*;
use crate::plan::job::{Job, SizeSpec};
use crate::plan::PlanError;

type R<T> = Result<T, PlanError>;

/// One of fio's options as fsbench takes it.
pub struct FioOpt {
    pub name: &'static str,
    /// fio's other names for it.
    pub aliases: &'static [&'static str],
    pub family: Family,
    pub help: &'static str,
    /// A value it takes (what an error asking for one shows).
    pub example: &'static str,
    pub apply: fn(&mut Job, Arg) -> R<Got>,
}

impl FioOpt {
    pub const fn new(
        family: Family,
        (name, aliases): (&'static str, &'static [&'static str]),
        help: &'static str,
        example: &'static str,
        apply: fn(&mut Job, Arg) -> R<Got>,
    ) -> FioOpt {
        FioOpt {
            name,
            aliases,
            family,
            help,
            example,
            apply,
        }
    }
}

/// What an option does, by family (the order `fsbench run --help` lists them in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Run,
    Target,
    Shape,
    Pace,
    Sync,
    Data,
    Verify,
    Steady,
    Logs,
    Replay,
    Errors,
    Cpus,
    PerIo,
    Engine,
    Report,
}

impl Family {
    pub fn title(self) -> &'static str {
        match self {
            Family::Run => "parallelism and run length",
            Family::Target => "where the I/O goes",
            Family::Shape => "shape of the load",
            Family::Pace => "rates, pauses and flows",
            Family::Sync => "syncing",
            Family::Data => "data written",
            Family::Verify => "verification",
            Family::Steady => "steady state",
            Family::Logs => "log files",
            Family::Replay => "recording and replaying I/O",
            Family::Errors => "errors",
            Family::Cpus => "CPUs and memory",
            Family::PerIo => "how each I/O is issued",
            Family::Engine => "engines",
            Family::Report => "reporting and timing",
        }
    }
}

/// Every option fsbench accepts, a family's rows together.
pub static OPTIONS: &[&[FioOpt]] = &[
    run::OPTIONS,
    target::OPTIONS,
    shape::OPTIONS,
    pace::OPTIONS,
    sync::OPTIONS,
    data::OPTIONS,
    verify::OPTIONS,
    steady::OPTIONS,
    logs::OPTIONS,
    replay::OPTIONS,
    errors::OPTIONS,
    cpus::OPTIONS,
    per_io::OPTIONS,
    engine::OPTIONS,
    report::OPTIONS,
];

/// Every row.
pub fn all() -> impl Iterator<Item = &'static FioOpt> {
    OPTIONS.iter().flat_map(|f| f.iter())
}

/// The row of `key`, by its name or one of fio's other names.
pub fn find(key: &str) -> Option<&'static FioOpt> {
    all().find(|o| o.name == key || o.aliases.contains(&key))
}

/// Whether `key` is an option fsbench takes (or one of fio's other names of one).
pub fn is_option(key: &str) -> bool {
    find(key).is_some()
}

/// What is said of an option fsbench does not take.
pub fn unsupported(key: &str) -> String {
    format!(
        "option '{key}' is not supported by fsbench (`fsbench run --help` lists the accepted ones; run this job with fio)"
    )
}

/// The accepted options, a line per family, for `fsbench run --help`.
pub fn help_text() -> String {
    let mut s = String::from("Accepted fio options:\n");
    for family in OPTIONS {
        let Some(first) = family.first() else {
            continue;
        };
        let names: Vec<String> = family
            .iter()
            .map(|o| match o.aliases {
                [] => o.name.to_string(),
                a => format!("{} ({})", o.name, a.join(", ")),
            })
            .collect();
        s.push_str(&format!(
            "  {}: {}\n",
            first.family.title(),
            names.join(", ")
        ));
    }
    s
}

/// What an option made of its value.
pub enum Got {
    Done,
    /// Taken, with a note for the record (a translation, or why it changes nothing here).
    Noted(String),
}
pub use Got::{Done, Noted};

/// An option as written: its name (as the job file has it) and value, with its row's example.
#[derive(Clone, Copy)]
pub struct Arg<'a> {
    pub key: &'a str,
    pub value: Option<&'a str>,
    example: &'static str,
}

impl<'a> Arg<'a> {
    /// The value; an option given without one is refused with an example.
    pub fn need(&self) -> R<&'a str> {
        match self.value {
            Some(v) if !v.trim().is_empty() => Ok(v.trim()),
            _ => Err(format!(
                "option '{}' needs a value, e.g. {}={}",
                self.key, self.key, self.example
            )
            .into()),
        }
    }

    /// The value as written ("" when none).
    pub fn shown(&self) -> &'a str {
        self.value.unwrap_or("")
    }

    /// 1 (also a bare key) or 0.
    pub fn bool(&self) -> R<bool> {
        parse_bool(self.key, self.value)
    }

    pub fn u32(&self, min: u32, max: u32) -> R<u32> {
        parse_u32(self.key, self.need()?, min, max)
    }

    pub fn u64(&self) -> R<u64> {
        parse_u64(self.key, self.need()?)
    }

    /// A time, in seconds when no unit is given.
    pub fn duration(&self) -> R<Duration> {
        parse_duration(self.need()?).map_err(|e| format!("{}: {e}", self.key).into())
    }

    /// A time, in microseconds when no unit is given (fio's thinktime and latency options).
    pub fn usecs(&self) -> R<Duration> {
        parse_duration_unit(self.need()?, 1e-6).map_err(|e| format!("{}: {e}", self.key).into())
    }

    /// A size in bytes (fio's units: 4k, 1m, 1g).
    pub fn bytes(&self) -> R<u64> {
        byte_size(self.key, self.need()?)
    }

    pub fn block(&self) -> R<u64> {
        block_size(self.key, self.need()?)
    }

    /// Bytes or a share (`50%`; 0% only where `zero` allows it).
    pub fn size(&self, zero: bool) -> R<SizeSpec> {
        size_spec(self.key, self.need()?, zero)
    }

    /// A choice among `names`, each with what it means.
    pub fn choice<T: Copy>(&self, names: &[(&str, T)]) -> R<T> {
        let v = self.need()?;
        names.iter().find(|n| n.0 == v).map(|n| n.1).ok_or_else(|| {
            let all: Vec<&str> = names.iter().map(|n| n.0).collect();
            let (last, rest) = all.split_last().unwrap_or((&"", &[]));
            let listed = match rest {
                [] => last.to_string(),
                r => format!("{} or {last}", r.join(", ")),
            };
            format!("{}={v}: expected {listed}", self.key).into()
        })
    }
}

impl Job {
    /// Applies one `key[=value]` option. Returns a note when the option was translated or has
    /// no effect in fsbench; an error names what is wrong and what would be right.
    pub fn apply(&mut self, key: &str, value: Option<&str>) -> R<Option<String>> {
        let Some(opt) = find(key) else {
            return Err(unsupported(key).into());
        };
        let arg = Arg {
            key,
            value,
            example: opt.example,
        };
        match (opt.apply)(self, arg)? {
            Done => Ok(None),
            Noted(n) => Ok(Some(n)),
        }
    }
}

mod cpus;
mod data;
mod engine;
mod errors;
mod logs;
mod pace;
mod per_io;
mod replay;
mod report;
mod run;
mod shape;
mod steady;
mod sync;
mod target;
mod verify;
pub use run::wait_for;

#[cfg(test)]
mod tests;
