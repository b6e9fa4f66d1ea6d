//! The raw block device, no filesystem: block jobs run on the device itself (the Btrfs vs ZFS article's "Raw"
//! column). A loop image by default, or the --device, under the same guards as mkfs.
use super::{FsDef, Kind};
use crate::plan::spec::FsSchema;

pub const DEF: FsDef = FsDef {
    schema: FsSchema {
        name: "raw",
        keys: &[],
        extra_mkfs: false,
        extra_mount: false,
        takes_path: false,
        vfs_mount: false,
    },
    kind: Kind::Raw,
    snapshots: false,
    threads: crate::metrics::evidence::FsThreads {
        daemons: &[],
        kernel: &[],
        code: &[],
    },
    room: || None,
    cow: super::CopyOnWrite::InPlace,
    integrity: None,
    axes: &[],
    summary: "the block device itself, no filesystem (baseline for block workloads)",
    kernel_name: "",
    tool: "",
    version_args: &[],
    min_size: super::MIB,
    mkfs_defaults: &[],
};
