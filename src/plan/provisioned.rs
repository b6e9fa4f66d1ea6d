//! What the manifest keeps about each provisioned target: the commands as run and the options
//! in effect. Plain data, written by `provision`, stored by `store`, read by `report`.

use serde::{Deserialize, Serialize};

/// One command as run, for the manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandRecord {
    pub argv: Vec<String>,
    pub exit_code: Option<i32>,
    pub duration_s: f64,
}

/// What the manifest keeps about a provisioned target.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct TargetInfo {
    pub id: String,
    pub label: String,
    pub fs: String,
    pub spec: String,
    pub backing: String,
    pub size_bytes: u64,
    pub device: Option<String>,
    pub mountpoint: String,
    pub tool_version: Option<String>,
    /// Mount options fsbench asked for.
    pub requested_mount_options: Vec<String>,
    /// Options in /proc/self/mountinfo after mounting (per-mount and superblock).
    pub mount_options: Vec<String>,
    /// Requested options missing from mountinfo: changed or ignored by the kernel.
    pub options_not_in_effect: Vec<String>,
    pub zfs_properties: Vec<(String, String)>,
    pub commands: Vec<CommandRecord>,
}
