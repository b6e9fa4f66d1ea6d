//! XFS: `mkfs.xfs`, kernel driver `xfs`. mkfs.xfs refuses data sections under 300 MB.
use super::{FsDef, Kind, MkfsDefault, MIB};
use crate::plan::spec::{Effect::*, FsSchema, OptKey, ValueKind::*};

const KEYS: &[OptKey] = &[
    OptKey {
        name: "maxpct",
        value: Int { min: 0, max: 100 },
        effect: Mkfs(&["-i", "maxpct={}"]),
        help: "max % of space for inodes (mkfs.xfs -i maxpct=), as the billion-files study used",
    },
    OptKey {
        name: "isize",
        value: Choice(&["256", "512", "1024", "2048"]),
        effect: Mkfs(&["-i", "size={}"]),
        help: "inode size in bytes (mkfs.xfs -i size=)",
    },
    OptKey {
        name: "bsize",
        value: Choice(&["1024", "2048", "4096", "8192", "16384", "32768", "65536"]),
        effect: Mkfs(&["-b", "size={}"]),
        help: "block size (mkfs.xfs -b size=)",
    },
    OptKey {
        name: "agcount",
        value: Int { min: 1, max: 65536 },
        effect: Mkfs(&["-d", "agcount={}"]),
        help: "allocation groups (mkfs.xfs -d agcount=)",
    },
    OptKey {
        name: "crc",
        value: Choice(&["0", "1"]),
        effect: Mkfs(&["-m", "crc={}"]),
        help: "metadata checksums (mkfs.xfs -m crc=)",
    },
    OptKey {
        name: "reflink",
        value: Choice(&["0", "1"]),
        effect: Mkfs(&["-m", "reflink={}"]),
        help: "reflink support (mkfs.xfs -m reflink=)",
    },
    super::DISCARD,
    OptKey {
        name: "inode64",
        value: Flag,
        effect: Mount,
        help: "inodes anywhere on the device",
    },
    OptKey {
        name: "largeio",
        value: Flag,
        effect: Mount,
        help: "report large preferred I/O sizes",
    },
    OptKey {
        name: "logbufs",
        value: Int { min: 2, max: 8 },
        effect: Mount,
        help: "in-memory log buffers",
    },
    OptKey {
        name: "logbsize",
        value: Choice(&["16k", "32k", "64k", "128k", "256k"]),
        effect: Mount,
        help: "log buffer size",
    },
    OptKey {
        name: "allocsize",
        value: Size,
        effect: Mount,
        help: "buffered write preallocation size",
    },
];

pub const DEF: FsDef = FsDef {
    schema: FsSchema {
        name: "xfs",
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
        kernel: &["xfs"],
        code: &["xfs_", "xlog_", "__xfs"],
    },
    room: || Some(&super::room::XFS),
    cow: super::CopyOnWrite::InPlace,
    integrity: Some(super::Integrity {
        locate: super::Locate::Fiemap,
        dir_blocks: Some(super::DirBlocks::XfsDb),
        checker: super::Checker::Offline {
            argv: &["xfs_repair", "-n"],
            found: |code| code != Some(0),
        },
        errors: None,
        kernel_prefix: "XFS",
    }),
    axes: &[
        &["agcount=4", "agcount=16"],
        &["logbsize=32k", "logbsize=256k"],
    ],
    summary: "XFS on a loop image or device (mkfs.xfs); at least 300 MiB",
    kernel_name: "xfs",
    tool: "mkfs.xfs",
    version_args: &["-V"],
    min_size: 300 * MIB,
    mkfs_defaults: &[MkfsDefault {
        unless: &[],
        args: &["-f", "-q", "-L", "{label}"],
    }],
};
