//! tmpfs: memory-backed, nothing to format; the size is the mount's `size=` limit.
use super::{FsDef, Kind};
use crate::plan::spec::{Effect::*, FsSchema, OptKey, ValueKind::*};

const KEYS: &[OptKey] = &[
    OptKey {
        name: "nr_inodes",
        value: Int {
            min: 1,
            max: u64::MAX,
        },
        effect: Mount,
        help: "maximum number of inodes",
    },
    OptKey {
        name: "huge",
        value: Choice(&["never", "always", "within_size", "advise"]),
        effect: Mount,
        help: "transparent huge pages",
    },
];

pub const DEF: FsDef = FsDef {
    schema: FsSchema {
        name: "tmpfs",
        keys: KEYS,
        extra_mkfs: false,
        extra_mount: true,
        takes_path: false,
        vfs_mount: true,
    },
    kind: Kind::Tmpfs,
    snapshots: false,
    threads: crate::metrics::evidence::FsThreads {
        daemons: &[],
        kernel: &[],
        code: &["shmem_"],
    },
    room: || None,
    cow: super::CopyOnWrite::InPlace,
    integrity: None,
    axes: &[],
    summary: "tmpfs in memory (the page cache ceiling); size= limits it",
    kernel_name: "tmpfs",
    tool: "",
    version_args: &[],
    min_size: 1,
    mkfs_defaults: &[],
};
