//! Below the workloads: the timed I/O loop (`drive`) and what it is made of. A worker's plan
//! (`worker`) is a job lowered into typed parts; the loop keeps `iodepth` I/Os in flight through
//! an engine, picks offsets (`files`, `offsets`, the random map `perm`, `blockmap`, `dist`) and
//! sizes, holds I/Os back (`pace`, `flow`, `probe`), fills write buffers (`data`, `verify`),
//! times every I/O from queue to completion (the engine never reads the clock) and records it
//! (`stats`, `fiolog`, `iolog`). One call drives one worker (one of a job's `numjobs`). Beside
//! it: the one-call-per-operation timing loop of bonnie and iozone (`calls`), a files tree's
//! content (`content`), and a phase's first failure (`failure`).

pub mod blockmap;
pub mod calls;
pub mod clock;
pub mod content;
pub mod data;
pub mod dist;
pub mod drive;
pub mod failure;
pub mod files;
pub mod fiolog;
pub mod flow;
pub mod iolog;
pub mod offsets;
pub mod pace;
pub mod perm;
pub mod probe;
pub mod stats;
pub mod verify;
pub mod worker;

pub use data::{DataGen, WriteData};
pub use drive::{drive, Live};
pub use failure::Failure;
pub use perm::Permutation;
pub use stats::Stats;
