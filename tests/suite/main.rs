//! fsbench's integration tests, one binary (as cargo's and ripgrep's suites are): each module is
//! one area, run through the built `fsbench` binary or the library. `privileged_*` modules need
//! root, real loop devices and pools, and hold `common::serial()` while they do; a test whose tool
//! is missing prints `SKIPPED: why`. Filter by module: `cargo test --test suite cli_fio::`.

mod common;

mod architecture;
mod cli;
mod cli_docs;
mod cli_fio;
mod cli_fioeng;
mod cli_fiofiles;
mod cli_fiologs;
mod cli_fioopts;
mod cli_history;
mod cli_history_safety;
mod cli_iozone;
mod cli_metrics;
mod cli_mpi;
mod cli_mpi_nodes;
mod cli_output;
mod cli_safety;
mod cli_study;
mod cli_time;
mod cli_tune;
mod fuzz_history;
mod fuzz_parsers;
mod privileged_aging;
mod privileged_audit;
mod privileged_faults;
mod privileged_iozone;
mod privileged_lifecycle;
mod privileged_limits;
mod privileged_profile;
mod privileged_provision;
mod privileged_room;
mod privileged_safety;
mod privileged_tune;
mod privileged_workloads;
mod report_browser;
mod report_golden;
mod report_imports;
mod report_studies;
