//! ext4: `mkfs.ext4`, kernel driver `ext4`.
use super::{FsDef, Kind, MkfsDefault, MIB};
use crate::plan::spec::{Effect::*, FsSchema, OptKey, ValueKind::*};

const KEYS: &[OptKey] = &[
    OptKey { name: "inodes", value: Int { min: 16, max: u32::MAX as u64 }, effect: Mkfs(&["-N", "{}"]), help: "number of inodes (mkfs.ext4 -N), as the billion-files study needed for a billion files" },
    OptKey { name: "bytes_per_inode", value: Int { min: 1024, max: 67_108_864 }, effect: Mkfs(&["-i", "{}"]), help: "bytes per inode (mkfs.ext4 -i); fsbench sets 16384 unless this or inodes is given" },
    OptKey { name: "inode_size", value: Choice(&["128", "256", "512", "1024"]), effect: Mkfs(&["-I", "{}"]), help: "inode size in bytes (mkfs.ext4 -I); default 256" },
    OptKey { name: "blocksize", value: Choice(&["1024", "2048", "4096"]), effect: Mkfs(&["-b", "{}"]), help: "block size (mkfs.ext4 -b); default 4096, set explicitly so small images do not get 1024" },
    OptKey { name: "nojournal", value: Flag, effect: Mkfs(&["-O", "^has_journal"]), help: "no journal (mkfs.ext4 -O ^has_journal)" },
    OptKey { name: "data", value: Choice(&["ordered", "writeback", "journal"]), effect: Mount, help: "data journaling mode (mount -o data=)" },
    OptKey { name: "commit", value: Int { min: 1, max: 3600 }, effect: Mount, help: "journal commit interval in seconds" },
    super::DISCARD,
    OptKey { name: "nobarrier", value: Flag, effect: MountAs("barrier=0"), help: "no write barriers (unsafe on power loss)" },
    OptKey { name: "dioread_nolock", value: Flag, effect: Mount, help: "direct I/O reads without inode lock" },
];

pub const DEF: FsDef = FsDef {
    schema: FsSchema {
        name: "ext4",
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
        kernel: &["jbd2/", "ext4-"],
        code: &["ext4_", "__ext4", "jbd2_", "__jbd2"],
    },
    room: || Some(&super::room::EXT4),
    cow: super::CopyOnWrite::InPlace,
    integrity: Some(super::Integrity {
        locate: super::Locate::Fiemap,
        dir_blocks: Some(super::DirBlocks::Debugfs),
        // e2fsck: 4 = errors left uncorrected, 8 and up = it could not check.
        checker: super::Checker::Offline {
            argv: &["e2fsck", "-fn"],
            found: |code| code.unwrap_or(8) & 4 != 0 || code.unwrap_or(8) >= 8,
        },
        errors: None,
        kernel_prefix: "EXT4-fs",
    }),
    axes: &[&[
        "data=ordered",
        "data=writeback",
        "data=journal",
        "nojournal",
    ]],
    summary: "ext4 on a loop image or device (mkfs.ext4)",
    kernel_name: "ext4",
    tool: "mkfs.ext4",
    version_args: &["-V"],
    min_size: 16 * MIB,
    mkfs_defaults: &[
        MkfsDefault {
            unless: &[],
            args: &["-F", "-q", "-L", "{label}"],
        },
        MkfsDefault {
            unless: &["blocksize"],
            args: &["-b", "4096"],
        },
        MkfsDefault {
            unless: &["inodes", "bytes_per_inode"],
            args: &["-i", "16384"],
        },
        MkfsDefault {
            unless: &["inode_size"],
            args: &["-I", "256"],
        },
        // Without this the kernel's ext4lazyinit thread writes inode tables in the background
        // while the benchmark runs.
        MkfsDefault {
            unless: &[],
            args: &["-E", "lazy_itable_init=0,lazy_journal_init=0"],
        },
    ],
};
