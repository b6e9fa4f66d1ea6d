//! The shape of what is provisioned besides mkfs and mount options: how many devices a target
//! spans (btrfs `raid1`, ZFS `mirror` / `raidz`, `devices=N`) and ZFS volumes (`zvol`,
//! `volblocksize=`). Checked when the spec is parsed, so a spec that cannot be built is refused
//! before anything runs.

use crate::plan::spec::{Effect, OptKey, TargetSpec, ValueKind};
use crate::plan::PlanError;

pub const DEVICES: OptKey = OptKey {
    name: "devices",
    value: ValueKind::Int { min: 1, max: 8 },
    effect: Effect::Layout,
    help: "how many devices (loop images of --size each) the target spans",
};

/// How many devices the target spans: `devices=N`, else 2 for a mirror, 3 for raidz, else 1.
pub fn members(spec: &TargetSpec) -> usize {
    if let Some(n) = spec
        .option("devices")
        .and_then(|o| o.value.as_deref())
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    match vdev(spec) {
        Some("mirror") | Some("raid1") => 2,
        Some("raidz") => 3,
        _ => 1,
    }
}

/// How many images' worth of the target's devices hold data (the rest hold copies or parity):
/// every one of a stripe (`devices=N`), half of btrfs's raid1, one of a mirror, all but one of
/// a raidz. The room of the target is the room of one image of that much data (measured:
/// privileged_room's layouts).
pub fn data_share(spec: &TargetSpec) -> f64 {
    let n = members(spec) as f64;
    match vdev(spec) {
        Some("raid1") => n / 2.0,
        Some("mirror") => 1.0,
        Some("raidz") => n - 1.0,
        _ => n,
    }
}

/// The redundancy the devices are put together with: btrfs `raid1`, ZFS `mirror` or `raidz`.
pub fn vdev(spec: &TargetSpec) -> Option<&'static str> {
    ["raid1", "mirror", "raidz"]
        .into_iter()
        .find(|k| spec.option(k).is_some())
}

/// Is the target a ZFS volume (a block device in a pool) rather than a dataset?
pub fn zvol(spec: &TargetSpec) -> bool {
    spec.fs == "zfs" && spec.option("zvol").is_some()
}

/// Refuses layouts that cannot be built, naming the fix.
pub fn check(spec: &TargetSpec) -> Result<(), PlanError> {
    let n = members(spec);
    let label = &spec.label;
    if spec.option("mirror").is_some() && spec.option("raidz").is_some() {
        return Err(format!(
            "target '{label}': mirror and raidz are two layouts of the pool: keep one"
        )
        .into());
    }
    if let Some(v) = vdev(spec) {
        if n < 2 {
            return Err(format!(
                "target '{label}': {v} needs at least 2 devices but devices={n}: give devices=2 or more (or drop {v})"
            )
            .into());
        }
    }
    if spec.fs == "zfs" && !zvol(spec) && spec.option("volblocksize").is_some() {
        return Err(format!(
            "target '{label}': volblocksize is an option of a zvol, not of a dataset: add zvol (zfs:zvol,volblocksize=16k), or use recordsize= for a dataset"
        )
        .into());
    }
    if zvol(spec) {
        if let Some(o) = spec.options.iter().find(|o| {
            matches!(
                o.key.as_str(),
                "recordsize" | "atime" | "primarycache" | "secondarycache"
            )
        }) {
            return Err(format!(
                "target '{label}': {} is a dataset option and a zvol has no dataset to apply it to: use volblocksize= for the volume's block size, or drop zvol",
                o.key
            )
            .into());
        }
    }
    Ok(())
}
