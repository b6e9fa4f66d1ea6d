//! fio's job files: the syntax below the options (syntax.rs: comments, include, `${VAR}`,
//! keywords, arithmetic), the file into jobs (jobfile.rs: sections, each option's line, errors
//! said once), the options (options.rs: the GROUPS table `run --help` prints, one function per
//! group) and their values (values.rs: sizes, durations, per-direction lists, distributions).
//! Pure: the host's figures and the environment come in as data.

pub mod errno;
pub mod jobfile;
pub mod options;
pub mod pattern;
pub mod syntax;
pub mod values;
