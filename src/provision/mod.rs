//! Provisioning: the FILESYSTEMS table (each filesystem's keys and capabilities), backings, safety guards, teardown and leftover cleanup.
//! This is the only module that runs mkfs, mount, zpool and losetup.

pub mod btrfs;
pub mod cleanup;
pub mod dir;
pub mod exec;
pub mod ext4;
pub mod f2fs;
pub mod faultdev;
pub mod layout;
pub mod lifecycle;
pub mod loopdev;
pub mod names;
pub mod offline;
pub mod probe;
pub mod raw;
pub mod registry;
pub mod room;
pub mod safety;
pub mod snapshot;
pub mod tmpfs;
pub mod tracefs;
pub mod workdir;
pub mod xfs;
pub mod zfs;

pub use lifecycle::{provision, Mounted, ProvisionError, Request, TargetInfo};
pub use offline::Handle;

use crate::plan::spec::{self, Effect, FsSchema, TargetSpec};
use crate::plan::PlanError;

pub const MIB: u64 = 1 << 20;

/// `discard`: the same mount option on every block filesystem that has it.
pub const DISCARD: spec::OptKey = spec::OptKey {
    name: "discard",
    value: spec::ValueKind::Flag,
    effect: Effect::Mount,
    help: "issue discards as blocks are freed",
};

/// The label written into every filesystem fsbench makes, so that it is recognisable as its own.
pub const FS_LABEL: &str = "fsbench";
/// Prefix of every pool, image and run directory fsbench makes.
pub const NAME_PREFIX: &str = "fsbench-";

/// How a filesystem comes to exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// mkfs on a block device, then mount.
    Mkfs,
    /// zpool create on a block device (mounts itself).
    Zfs,
    /// mount -t tmpfs.
    Tmpfs,
    /// An existing directory.
    Dir,
    /// The block device itself, nothing formatted or mounted.
    Raw,
}

/// mkfs arguments fsbench always passes, unless one of `unless` keys is set by the user.
#[derive(Debug, Clone, Copy)]
pub struct MkfsDefault {
    pub unless: &'static [&'static str],
    pub args: &'static [&'static str],
}

/// How the integrity audit finds a file's data in the images under a filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locate {
    /// FIEMAP's physical address is the device's byte offset (ext4, XFS, F2FS).
    Fiemap,
    /// FIEMAP gives btrfs's logical address; `btrfs-map-logical` maps it to each mirror.
    FiemapLogical,
    /// `zdb` lists a file's data blocks (DVAs) in the pool.
    Zdb,
}

/// How the audit finds a block of a directory's entries (None: not located on this filesystem).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirBlocks {
    /// `debugfs -R 'blocks <ino>'` (ext4).
    Debugfs,
    /// `xfs_db -r -c 'inode N' -c bmap` (XFS).
    XfsDb,
}

/// The checker the audit runs after the damage.
#[derive(Debug, Clone, Copy)]
pub enum Checker {
    /// A read-only check of the unmounted device: the command (the device is appended) and
    /// whether an exit status means it found problems.
    Offline {
        argv: &'static [&'static str],
        found: fn(Option<i32>) -> bool,
    },
    /// `btrfs scrub start -B` on the mounted filesystem.
    BtrfsScrub,
    /// `zpool scrub` of the pool.
    ZpoolScrub,
}

/// Where a filesystem counts the errors it found on its devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCount {
    /// `btrfs device stats`: corruption errors.
    BtrfsDeviceStats,
    /// `zpool status`: the CKSUM column.
    ZpoolCksum,
}

/// What the integrity audit needs to know of a filesystem (None: it cannot be audited).
#[derive(Debug, Clone, Copy)]
pub struct Integrity {
    pub locate: Locate,
    pub dir_blocks: Option<DirBlocks>,
    pub checker: Checker,
    pub errors: Option<ErrorCount>,
    /// How its kernel messages begin (`EXT4-fs`, `XFS`, `BTRFS`), for the damage they report.
    pub kernel_prefix: &'static str,
}

/// What a filesystem is and can do, as data: workloads, the frame and the coordinator ask these,
/// never the filesystem's name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Caps {
    /// mkfs or `zpool create` formats a block device (so it needs root and a backing size).
    pub formats: bool,
    /// It lives in memory (tmpfs): its reads are memory reads; there is no device to bypass.
    pub memory_backed: bool,
    /// The target is the block device itself, nothing formatted or mounted.
    pub raw_device: bool,
    /// An existing directory of the user's (NFS, CephFS, Lustre): nothing is formatted.
    pub existing_dir: bool,
    /// A pool with datasets (ZFS): space and inode figures lag until the pool commits.
    pub pool: bool,
    /// It takes snapshots (btrfs subvolumes, ZFS datasets).
    pub snapshots: bool,
    /// How the integrity audit works on it, when it can.
    pub integrity: Option<Integrity>,
    /// Its own processes and kernel threads, by name (the evidence counts their CPU).
    pub threads: crate::metrics::evidence::FsThreads,
}

/// Whether a filesystem rewrites in place or copies on write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyOnWrite {
    /// A rewrite goes where the block was.
    InPlace,
    /// A rewrite is written anew and the old copy freed after (at its transaction's commit).
    Always,
    /// Copy on write unless the target is mounted with this option (btrfs's nodatacow).
    Unless(&'static str),
}

/// Whether `t` copies on write, as its filesystem and options say.
pub fn copies_on_write(t: &TargetSpec) -> bool {
    match find(&t.fs).map(|d| d.cow) {
        Some(CopyOnWrite::Always) => true,
        Some(CopyOnWrite::Unless(opt)) => !t.options.iter().any(|o| o.key == opt),
        _ => false,
    }
}

/// One filesystem fsbench can provision: one file in src/provision/ and one line in FILESYSTEMS.
#[derive(Debug, Clone, Copy)]
pub struct FsDef {
    pub schema: FsSchema,
    pub kind: Kind,
    /// Snapshots and the audit's tools (the rest of `Caps` follows from `kind`).
    pub snapshots: bool,
    /// The processes and kernel threads that do its work, by name.
    pub threads: crate::metrics::evidence::FsThreads,
    /// The room it leaves for data on fresh images of a few sizes here (`room.rs`); None where
    /// the room is not the image's (tmpfs, a directory, a device).
    pub room: fn() -> Option<&'static room::Table>,
    /// Whether it writes a rewritten block anew before it frees the old one.
    pub cow: CopyOnWrite,
    pub integrity: Option<Integrity>,
    /// The options that commonly matter for performance, as `fsbench tune --axes` varies them:
    /// each axis is its alternatives ("" is the filesystem's default), the candidates their
    /// product.
    pub axes: &'static [&'static [&'static str]],
    pub summary: &'static str,
    /// Name in /proc/filesystems ("" when not a kernel filesystem).
    pub kernel_name: &'static str,
    /// The tool that creates it ("" when none).
    pub tool: &'static str,
    pub version_args: &'static [&'static str],
    /// Smallest backing size, refused below with a clear message.
    pub min_size: u64,
    /// Arguments after the tool name and before the user's options; `{label}` is the fs label.
    pub mkfs_defaults: &'static [MkfsDefault],
}

pub static FILESYSTEMS: &[&FsDef] = &[
    &ext4::DEF,
    &xfs::DEF,
    &btrfs::DEF,
    &zfs::DEF,
    &f2fs::DEF,
    &tmpfs::DEF,
    &dir::DEF,
    &raw::DEF,
];

pub fn find(name: &str) -> Option<&'static FsDef> {
    FILESYSTEMS.iter().copied().find(|d| d.schema.name == name)
}

impl FsDef {
    /// What the filesystem is and can do.
    pub fn caps(&self) -> Caps {
        Caps {
            formats: matches!(self.kind, Kind::Mkfs | Kind::Zfs),
            memory_backed: self.kind == Kind::Tmpfs,
            raw_device: self.kind == Kind::Raw,
            existing_dir: self.kind == Kind::Dir,
            pool: self.kind == Kind::Zfs,
            snapshots: self.snapshots,
            integrity: self.integrity,
            threads: self.threads,
        }
    }
}

/// The capabilities of a filesystem by its name in a spec (`ext4`, `dir`); none for a name
/// fsbench does not provision.
pub fn caps(name: &str) -> Caps {
    find(name).map(FsDef::caps).unwrap_or_default()
}

/// The capabilities of a mounted filesystem by its kernel type (`fsbench run`'s directory):
/// tmpfs is memory; any other is a directory of the user's.
pub fn caps_of_mounted(kernel_fs: &str) -> Caps {
    FILESYSTEMS
        .iter()
        .find(|d| d.kind == Kind::Tmpfs && d.kernel_name == kernel_fs)
        .map(|d| d.caps())
        .unwrap_or_else(|| caps(dir::DEF.schema.name))
}

pub fn schemas() -> Vec<FsSchema> {
    FILESYSTEMS.iter().map(|d| d.schema).collect()
}

/// Parses a target spec against the FILESYSTEMS table.
pub fn parse_target(text: &str) -> Result<TargetSpec, PlanError> {
    let spec = spec::parse_target(text, &schemas())?;
    layout::check(&spec)?;
    safety::check_named_devices(&spec)?;
    Ok(spec)
}

fn def_of(spec: &TargetSpec) -> &'static FsDef {
    find(&spec.fs).expect("a parsed spec names a filesystem of the table")
}

fn fill(template: &str, value: Option<&str>) -> String {
    template.replace("{}", value.unwrap_or(""))
}

/// The full mkfs command line for a target on `device`.
pub fn mkfs_argv(spec: &TargetSpec, device: &str) -> Vec<String> {
    mkfs_argv_on(spec, &[device.to_string()])
}

/// The mkfs command line for a target on its devices (btrfs spans several: `raid1` makes data
/// and metadata raid1 unless data= or metadata= say otherwise).
pub fn mkfs_argv_on(spec: &TargetSpec, devices: &[String]) -> Vec<String> {
    let def = def_of(spec);
    let mut argv = vec![def.tool.to_string()];
    for d in def.mkfs_defaults {
        if d.unless.iter().any(|k| spec.option(k).is_some()) {
            continue;
        }
        argv.extend(d.args.iter().map(|a| a.replace("{label}", FS_LABEL)));
    }
    for opt in &spec.options {
        let key = def.schema.key(&opt.key);
        if let Some(spec::OptKey {
            effect: Effect::Mkfs(args),
            ..
        }) = key
        {
            argv.extend(args.iter().map(|a| fill(a, opt.value.as_deref())));
        }
    }
    if spec.option("raid1").is_some() {
        for (flag, key) in [("-d", "data"), ("-m", "metadata")] {
            if spec.option(key).is_none() {
                argv.extend([flag.to_string(), "raid1".to_string()]);
            }
        }
    }
    argv.extend(spec.extra_mkfs.iter().cloned());
    argv.extend(devices.iter().cloned());
    argv
}

/// The mount options a target asks for, in the order written.
pub fn mount_options(spec: &TargetSpec) -> Vec<String> {
    let def = def_of(spec);
    let mut out = Vec::new();
    for opt in &spec.options {
        let Some(key) = def.schema.key(&opt.key) else {
            continue;
        };
        match key.effect {
            Effect::Mount => out.push(match &opt.value {
                Some(v) => format!("{}={v}", opt.key),
                None => opt.key.clone(),
            }),
            Effect::MountAs(t) => out.push(fill(t, opt.value.as_deref())),
            _ => {}
        }
    }
    out.extend(spec.extra_mount.iter().cloned());
    out
}

/// The mount command line: `mount -t TYPE [-o OPTS] SOURCE MOUNTPOINT`.
pub fn mount_argv(spec: &TargetSpec, source: &str, mountpoint: &str, size: u64) -> Vec<String> {
    let def = def_of(spec);
    let mut opts = mount_options(spec);
    if def.kind == Kind::Tmpfs {
        opts.insert(0, format!("size={size}"));
    }
    let mut argv = vec![
        "mount".to_string(),
        "-t".to_string(),
        def.kernel_name.to_string(),
    ];
    if !opts.is_empty() {
        argv.push("-o".to_string());
        argv.push(opts.join(","));
    }
    argv.push(source.to_string());
    argv.push(mountpoint.to_string());
    argv
}

/// What provisioning a target would do, as lines to print (`fsbench study --check`): its backing
/// and the commands, with `/dev/loopN` for the loop device it would get; or why this host
/// cannot provide it.
pub fn describe(spec: &TargetSpec, size: u64) -> Vec<String> {
    let def = def_of(spec);
    let size = spec.size.unwrap_or(size);
    if let Err(e) = lifecycle::availability(spec) {
        return vec![format!("skipped on this host: {e}")];
    }
    let image = format!(
        "a sparse loop image of {}",
        crate::plan::units::format_bytes(size)
    );
    let devs: Vec<String> = (0..layout::members(spec))
        .map(|k| {
            format!(
                "/dev/loop{}",
                if k == 0 { "N".into() } else { format!("N{k}") }
            )
        })
        .collect();
    let cmd = |a: Vec<String>| exec::cmdline(&a);
    match def.kind {
        Kind::Dir => vec![format!(
            "an existing directory: a scratch directory in {}",
            spec.path.as_deref().unwrap_or("?")
        )],
        Kind::Raw => vec![image, "the loop device itself, nothing formatted".into()],
        Kind::Tmpfs => vec![cmd(mount_argv(spec, "tmpfs", "MNT", size))],
        Kind::Zfs => vec![
            image,
            cmd(zfs::create_argv_on(spec, "fsbench-RUNID-N", &devs, "MNT")),
        ],
        Kind::Mkfs => vec![
            image,
            cmd(mkfs_argv_on(spec, &devs)),
            cmd(mount_argv(spec, &devs[0], "MNT", size)),
        ],
    }
}

/// A target spec with `fsbench tune --axes`'s alternatives added as braces: `zfs` becomes
/// `zfs:{recordsize=4k,...},{logbias=latency,...}`; an axis whose key the spec already sets is
/// left out. A filesystem without axes is the spec itself.
pub fn with_axes(spec: &TargetSpec) -> String {
    let def = def_of(spec);
    let set: Vec<&str> = spec.options.iter().map(|o| o.key.as_str()).collect();
    let key_of = |alt: &str| alt.split('=').next().unwrap_or("").to_string();
    let mut braces = Vec::new();
    for axis in def.axes {
        if axis
            .iter()
            .any(|a| !a.is_empty() && set.contains(&key_of(a).as_str()))
        {
            continue;
        }
        let alts: Vec<&str> = axis
            .iter()
            .map(|a| if a.is_empty() { "-" } else { a })
            .collect();
        braces.push(format!("{{{}}}", alts.join(",")));
    }
    if braces.is_empty() {
        return spec.spec.clone();
    }
    let sep = if spec.spec.contains(':') { "," } else { ":" };
    format!("{}{sep}{}", spec.spec, braces.join(","))
}

/// A candidate spec after expansion, with the "-" of a default alternative taken out
/// (`zfs:-,logbias=latency` is `zfs:logbias=latency`; `btrfs:-,-` is `btrfs`).
pub fn drop_defaults(spec: &str) -> String {
    let Some((fs, rest)) = spec.split_once(':') else {
        return spec.to_string();
    };
    let kept: Vec<&str> = rest.split(',').filter(|p| p.trim() != "-").collect();
    if kept.is_empty() {
        fs.to_string()
    } else {
        format!("{fs}:{}", kept.join(","))
    }
}

/// Refuses a backing smaller than the filesystem can honestly be made on.
pub fn check_size(spec: &TargetSpec, size: u64) -> Result<(), PlanError> {
    let def = def_of(spec);
    if matches!(def.kind, Kind::Mkfs | Kind::Zfs | Kind::Raw) && size < def.min_size {
        return Err(format!(
            "{} needs a backing of at least {} but target '{}' would get {}: give --size {} or more (or size= in the spec)",
            def.schema.name,
            crate::plan::units::format_bytes(def.min_size),
            spec.label,
            crate::plan::units::format_bytes(size),
            crate::plan::units::format_bytes(def.min_size.next_multiple_of(MIB)),
        ).into());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
