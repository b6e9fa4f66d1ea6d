//! F2FS: `mkfs.f2fs`, kernel driver `f2fs` (absent from some kernels, ours among them).
use super::{FsDef, Kind, MkfsDefault, MIB};
use crate::plan::spec::{Effect::*, FsSchema, OptKey, ValueKind::*};

const KEYS: &[OptKey] = &[
    OptKey {
        name: "features",
        value: Text,
        effect: Mkfs(&["-O", "{}"]),
        help: "feature list (mkfs.f2fs -O), e.g. extra_attr,compression",
    },
    OptKey {
        name: "segs_per_sec",
        value: Int { min: 1, max: 512 },
        effect: Mkfs(&["-s", "{}"]),
        help: "segments per section (mkfs.f2fs -s), the billion-files study used 10",
    },
    OptKey {
        name: "secs_per_zone",
        value: Int { min: 1, max: 512 },
        effect: Mkfs(&["-z", "{}"]),
        help: "sections per zone (mkfs.f2fs -z), the billion-files study used 10",
    },
    OptKey {
        name: "large_nat_bitmap",
        value: Flag,
        effect: Mkfs(&["-i"]),
        help: "extended node bitmap for more inodes (mkfs.f2fs -i), as the billion-files study",
    },
    super::DISCARD,
    OptKey {
        name: "nodiscard",
        value: Flag,
        effect: Mount,
        help: "no discards",
    },
    OptKey {
        name: "compress_algorithm",
        value: Choice(&["lzo", "lz4", "zstd", "lzo-rle"]),
        effect: Mount,
        help: "compression algorithm",
    },
    OptKey {
        name: "mode",
        value: Choice(&["adaptive", "lfs"]),
        effect: Mount,
        help: "allocation mode",
    },
];

pub const DEF: FsDef = FsDef {
    schema: FsSchema {
        name: "f2fs",
        keys: KEYS,
        extra_mkfs: true,
        extra_mount: true,
        takes_path: false,
        vfs_mount: true,
    },
    kind: Kind::Mkfs,
    snapshots: false,
    threads: crate::metrics::evidence::FsThreads {
        daemons: &[],
        kernel: &["f2fs"],
        code: &["f2fs_", "__f2fs"],
    },
    room: || Some(&super::room::F2FS),
    cow: super::CopyOnWrite::InPlace,
    integrity: Some(super::Integrity {
        locate: super::Locate::Fiemap,
        dir_blocks: None,
        checker: super::Checker::Offline {
            argv: &["fsck.f2fs"],
            found: |code| code != Some(0),
        },
        errors: None,
        kernel_prefix: "F2FS",
    }),
    axes: &[],
    summary: "F2FS on a loop image or device (mkfs.f2fs); needs f2fs in the kernel",
    kernel_name: "f2fs",
    tool: "mkfs.f2fs",
    version_args: &["-V"],
    min_size: 64 * MIB,
    mkfs_defaults: &[MkfsDefault {
        unless: &[],
        args: &["-f", "-q", "-l", "{label}"],
    }],
};
