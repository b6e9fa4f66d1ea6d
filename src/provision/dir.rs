//! An existing mounted directory (NFS, CephFS, Lustre, anything): nothing is formatted or mounted;
//! fsbench works in a subdirectory of its own and removes it afterwards.
use super::{FsDef, Kind};
use crate::plan::spec::FsSchema;

pub const DEF: FsDef = FsDef {
    schema: FsSchema {
        name: "dir",
        keys: &[],
        extra_mkfs: false,
        extra_mount: false,
        takes_path: true,
        vfs_mount: false,
    },
    kind: Kind::Dir,
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
    summary: "an existing directory, e.g. dir:/mnt/nfs (nothing is formatted)",
    kernel_name: "",
    tool: "",
    version_args: &[],
    min_size: 0,
    mkfs_defaults: &[],
};
