//! The environment fingerprint of a target in a study: what, besides the code under test, can
//! change its figures: the host (kernel, CPU, memory, fsbench's build, each disk's model, size,
//! rotational and scheduler) and the target as provisioned (its spec, backing and size, the
//! device of `--device`, the mkfs tool's version, the mount options in effect and ZFS
//! properties). All of it comes from the study's manifest.

use std::collections::BTreeMap;

use crate::store::Manifest;

/// The fingerprint of `label` in the study, as named fields.
pub fn fingerprint(m: &Manifest, label: &str) -> BTreeMap<String, String> {
    let e = &m.environment;
    let mut f = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        if !v.is_empty() {
            f.insert(k.to_string(), v);
        }
    };
    put("kernel", e.kernel.clone());
    put("cpu_model", e.cpu_model.clone());
    put("cpus", e.cpus.to_string());
    put("memory_bytes", e.mem_total_bytes.to_string());
    put(
        "fsbench",
        if e.fsbench_build.is_empty() {
            e.fsbench_version.clone()
        } else {
            e.fsbench_build.clone()
        },
    );
    for d in &e.disks {
        put(
            &format!("disk.{}", d.name),
            format!(
                "{} {} bytes, {}, scheduler {}",
                if d.model.is_empty() { "-" } else { &d.model },
                d.size_bytes,
                if d.rotational {
                    "rotational"
                } else {
                    "non-rotational"
                },
                d.scheduler
            ),
        );
    }
    if let Some(spec) = m.plan.targets.iter().find(|t| t.label == label) {
        put("spec", spec.spec.clone());
    }
    if let Some(t) = m.targets.iter().find(|t| t.label == label) {
        put("backing", t.backing.clone());
        put("size_bytes", t.size_bytes.to_string());
        // A loop image's device changes every run: only a whole device (--device) is named.
        if m.plan.device.is_some() {
            put("device", t.device.clone().unwrap_or_default());
        }
        put("mkfs_tool", t.tool_version.clone().unwrap_or_default());
        put("mount_options", t.mount_options.join(","));
        let zfs: Vec<String> = t
            .zfs_properties
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        put("zfs_properties", zfs.join(","));
    }
    f
}

/// A short stable digest of a fingerprint (FNV-1a over its fields), to group studies alike.
pub fn digest(f: &BTreeMap<String, String>) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for (k, v) in f {
        for b in k.bytes().chain([0]).chain(v.bytes()).chain([0]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}")
}

/// The fields that differ between two fingerprints: (field, old, new), "-" for a missing one.
pub fn differences(
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
) -> Vec<(String, String, String)> {
    let keys: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    keys.into_iter()
        .filter(|k| old.get(*k) != new.get(*k))
        .map(|k| {
            let get = |m: &BTreeMap<String, String>| m.get(k).cloned().unwrap_or("-".into());
            (k.clone(), get(old), get(new))
        })
        .collect()
}
