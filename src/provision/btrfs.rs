//! Btrfs: `mkfs.btrfs`, kernel driver `btrfs`. mkfs.btrfs needs about 110 MiB for its default profile.
use super::{FsDef, Kind, MkfsDefault, MIB};
use crate::plan::spec::{Effect::*, FsSchema, OptKey, ValueKind::*};

const COMPRESS: &[&str] = &["zstd", "lzo", "zlib", "no"];

const KEYS: &[OptKey] = &[
    OptKey {
        name: "nodatacow",
        value: Flag,
        effect: Mount,
        help: "overwrite data in place, no copy-on-write (implies nodatasum)",
    },
    OptKey {
        name: "nodatasum",
        value: Flag,
        effect: Mount,
        help: "no data checksums",
    },
    OptKey {
        name: "compress",
        value: Choice(COMPRESS),
        effect: Mount,
        help: "compress data that compresses well",
    },
    OptKey {
        name: "compress-force",
        value: Choice(COMPRESS),
        effect: Mount,
        help: "compress all data",
    },
    OptKey {
        name: "ssd",
        value: Flag,
        effect: Mount,
        help: "SSD allocation heuristics",
    },
    OptKey {
        name: "nossd",
        value: Flag,
        effect: Mount,
        help: "no SSD allocation heuristics",
    },
    OptKey {
        name: "autodefrag",
        value: Flag,
        effect: Mount,
        help: "defragment small random writes in the background",
    },
    super::DISCARD,
    OptKey {
        name: "commit",
        value: Int { min: 1, max: 3600 },
        effect: Mount,
        help: "transaction commit interval in seconds",
    },
    OptKey {
        name: "space_cache",
        value: Choice(&["v1", "v2"]),
        effect: Mount,
        help: "free space cache version",
    },
    OptKey {
        name: "nodesize",
        value: Choice(&["4k", "8k", "16k", "32k", "64k"]),
        effect: Mkfs(&["-n", "{}"]),
        help: "metadata node size (mkfs.btrfs -n)",
    },
    OptKey {
        name: "metadata",
        value: Choice(&["single", "dup"]),
        effect: Mkfs(&["-m", "{}"]),
        help: "metadata profile (mkfs.btrfs -m)",
    },
    OptKey {
        name: "data",
        value: Choice(&["single", "dup"]),
        effect: Mkfs(&["-d", "{}"]),
        help: "data profile (mkfs.btrfs -d)",
    },
    OptKey {
        name: "csum",
        value: Choice(&["crc32c", "xxhash", "sha256", "blake2"]),
        effect: Mkfs(&["--csum", "{}"]),
        help: "checksum algorithm (mkfs.btrfs --csum)",
    },
    OptKey {
        name: "raid1",
        value: Flag,
        effect: Layout,
        help: "data and metadata mirrored over devices=N loop images (default 2)",
    },
    super::layout::DEVICES,
    OptKey {
        name: "mixed",
        value: Flag,
        effect: Mkfs(&["-M"]),
        help: "mixed data and metadata block groups (mkfs.btrfs -M)",
    },
];

pub const DEF: FsDef = FsDef {
    schema: FsSchema {
        name: "btrfs",
        keys: KEYS,
        extra_mkfs: true,
        extra_mount: true,
        takes_path: false,
        vfs_mount: true,
    },
    kind: Kind::Mkfs,
    snapshots: true,
    threads: crate::metrics::evidence::FsThreads {
        daemons: &[],
        kernel: &["btrfs"],
        code: &["btrfs_", "__btrfs"],
    },
    room: || Some(&super::room::BTRFS),
    cow: super::CopyOnWrite::Unless("nodatacow"),
    integrity: Some(super::Integrity {
        locate: super::Locate::FiemapLogical,
        dir_blocks: None,
        checker: super::Checker::BtrfsScrub,
        errors: Some(super::ErrorCount::BtrfsDeviceStats),
        kernel_prefix: "BTRFS",
    }),
    axes: &[&["", "nodatacow"], &["", "compress=zstd"]],
    summary: "Btrfs on a loop image or device (mkfs.btrfs); at least 110 MiB",
    kernel_name: "btrfs",
    tool: "mkfs.btrfs",
    version_args: &["--version"],
    min_size: 110 * MIB,
    mkfs_defaults: &[MkfsDefault {
        unless: &[],
        args: &["-f", "-q", "-L", "{label}"],
    }],
};
