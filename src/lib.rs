//! fsbench: provision real filesystems and benchmark them side by side.
//!
//! Layout and arrows (see ../shared/DESIGN.md and docs/): `plan` and `report` never call the
//! system; only `target` runs mkfs and mount; only `sys` holds `unsafe`.

pub mod cli;
pub mod cmd;
pub mod engine;
pub mod frame;
pub mod io;
pub mod metrics;
pub mod plan;
pub mod provision;
pub mod report;
pub mod runner;
pub mod stop;
pub mod store;
pub mod sys;
pub mod workload;
