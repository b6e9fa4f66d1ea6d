//! fsbench: provision real filesystems and benchmark them side by side.
//!
//! Layers, from the bottom (docs/architecture.md draws the arrows): `stop`, `out` (standard output
//! that a closed pipe ends quietly) and `sys` (the system layer, the only place with `unsafe`); `plan` (plain data); `metrics`, `engine`, `io`;
//! `profile` (call-chain profiles of a phase's threads); `provision` (the only module that runs
//! mkfs, mount, zpool, losetup); `store`; `frame` (the phase frame); `workload`; `runner` (the
//! coordinator); `endpoint` (the live metrics server); `report` (pure: never calls the system);
//! `cli` and `cmd` (the command edge). No top-level module imports one that imports it back
//! (tests/suite/architecture.rs checks it).

#![deny(unsafe_code)]

pub(crate) mod about;
pub mod cli;
pub mod cmd;
pub(crate) mod endpoint;
pub(crate) mod engine;
pub mod frame;
pub mod history;
pub(crate) mod io;
pub mod metrics;
pub mod out;
pub mod plan;
pub mod profile;
pub mod provision;
pub(crate) mod ranks;
pub(crate) mod report;
pub(crate) mod runner;
pub(crate) mod stop;
pub(crate) mod store;
#[allow(unsafe_code)]
pub mod sys;
pub mod workload;
