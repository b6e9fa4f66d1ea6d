//! A constant per metric of the catalogue whose name is a compound word: writers and readers
//! name a metric through these, so a renamed metric is a compile error, not a silently empty
//! column (tests/suite/architecture.rs refuses a string literal equal to one of these names outside
//! this file). Generated from `fsbench list --json`; a test checks it against the catalogue.

pub const AVG_KIB_PER_SEC: &str = "avg_kib_per_sec";
pub const BLOCK_SIZE: &str = "block_size";
pub const BLOCKS_PER_SEC: &str = "blocks_per_sec";
pub const BLOCKS_USED: &str = "blocks_used";
pub const BYTES_FLIPPED: &str = "bytes_flipped";
pub const BYTES_PER_SEC: &str = "bytes_per_sec";
pub const CACHED_FAILED: &str = "cached_failed";
pub const CACHED_MIXED: &str = "cached_mixed";
pub const CACHED_NEW: &str = "cached_new";
pub const CACHED_OLD: &str = "cached_old";
pub const CACHED_OTHER: &str = "cached_other";
pub const CHILDREN_KIB_PER_SEC: &str = "children_kib_per_sec";
pub const CONTROLS_DAMAGED: &str = "controls_damaged";
pub const CONTROLS_OK: &str = "controls_ok";
pub const CPU_PCT: &str = "cpu_pct";
pub const CPU_SYS_PCT: &str = "cpu_sys_pct";
pub const CPU_USER_NS_PER_IO: &str = "cpu_user_ns_per_io";
pub const CPU_USER_PCT: &str = "cpu_user_pct";
pub const CRC_MISMATCH: &str = "crc_mismatch";
pub const DETECTED_BY_FS: &str = "detected_by_fs";
pub const DEVICE_FAILED: &str = "device_failed";
pub const DEVICE_FAILED_READS: &str = "device_failed_reads";
pub const DEVICE_FAILED_WRITES: &str = "device_failed_writes";
pub const DEVICE_FLUSHES: &str = "device_flushes";
pub const DEVICE_MIXED: &str = "device_mixed";
pub const DEVICE_NEW: &str = "device_new";
pub const DEVICE_OLD: &str = "device_old";
pub const DEVICE_OTHER: &str = "device_other";
pub const DEVICE_READ_BYTES: &str = "device_read_bytes";
pub const DEVICE_WRITE_BYTES: &str = "device_write_bytes";
pub const DEVICE_WRITES: &str = "device_writes";
pub const DEVICE_WRITTEN_BYTES: &str = "device_written_bytes";
pub const END_FSYNC_NS: &str = "end_fsync_ns";
pub const EXHAUSTED_INODES: &str = "exhausted_inodes";
pub const EXHAUSTED_SPACE: &str = "exhausted_space";
pub const EXIT_CODE: &str = "exit_code";
pub const EXTENTS_ENCODED: &str = "extents_encoded";
pub const FILES_PER_SEC: &str = "files_per_sec";
pub const FILES_TOTAL: &str = "files_total";
pub const FIRST_DONE_BYTES_PER_SEC: &str = "first_done_bytes_per_sec";
pub const FIRST_DONE_OPS: &str = "first_done_ops";
pub const FIRST_DONE_OPS_PER_SEC: &str = "first_done_ops_per_sec";
pub const FIRST_DONE_S: &str = "first_done_s";
pub const FIRST_FSYNC_BLOCKED: &str = "first_fsync_blocked";
pub const FIRST_FSYNC_ERRNO: &str = "first_fsync_errno";
pub const FS_BYTES_AVAIL_AFTER: &str = "fs_bytes_avail_after";
pub const FS_DETECTED: &str = "fs_detected";
pub const FS_ERROR_COUNT: &str = "fs_error_count";
pub const FS_INODES_FREE_AFTER: &str = "fs_inodes_free_after";
pub const FSYNC_NS: &str = "fsync_ns";
pub const INODES_DYNAMIC: &str = "inodes_dynamic";
pub const INODES_USED: &str = "inodes_used";
pub const INTEGRITY_OK: &str = "integrity_ok";
pub const IO500_BW: &str = "io500_bw";
pub const IO500_MD: &str = "io500_md";
pub const IO500_SCORE: &str = "io500_score";
pub const IO500_VALUE: &str = "io500_value";
pub const IOR_CLOSE_S: &str = "ior_close_s";
pub const IOR_LATENCY_S: &str = "ior_latency_s";
pub const IOR_OPEN_S: &str = "ior_open_s";
pub const IOR_STONEWALL_BYTES: &str = "ior_stonewall_bytes";
pub const IOR_STONEWALL_S: &str = "ior_stonewall_s";
pub const IOR_XFER_S: &str = "ior_xfer_s";
pub const KIB_PER_SEC: &str = "kib_per_sec";
pub const LAST_DONE_S: &str = "last_done_s";
pub const LAT_P99_NS: &str = "lat_p99_ns";
pub const LAYOUT_SCORE: &str = "layout_score";
pub const MAX_KIB_PER_SEC: &str = "max_kib_per_sec";
pub const MIN_KIB_PER_SEC: &str = "min_kib_per_sec";
pub const MOUNTS_AGAIN: &str = "mounts_again";
pub const OPS_PER_SEC: &str = "ops_per_sec";
pub const OUTSIDE_SYSCALLS_PCT: &str = "outside_syscalls_pct";
pub const OVERWRITE_SHARE: &str = "overwrite_share";
pub const PARENT_KIB_PER_SEC: &str = "parent_kib_per_sec";
pub const PEAK_RSS_BYTES: &str = "peak_rss_bytes";
pub const POST_PRE_RATIO: &str = "post_pre_ratio";
pub const RANK_BYTES_PER_SEC_MAX: &str = "rank_bytes_per_sec_max";
pub const RANK_BYTES_PER_SEC_MEAN: &str = "rank_bytes_per_sec_mean";
pub const RANK_BYTES_PER_SEC_MIN: &str = "rank_bytes_per_sec_min";
pub const RANK_OPS_PER_SEC_MAX: &str = "rank_ops_per_sec_max";
pub const RANK_OPS_PER_SEC_MEAN: &str = "rank_ops_per_sec_mean";
pub const RANK_OPS_PER_SEC_MIN: &str = "rank_ops_per_sec_min";
pub const RANK_SPREAD_PCT: &str = "rank_spread_pct";
pub const READ_BYTES: &str = "read_bytes";
pub const READ_BYTES_PER_SEC: &str = "read_bytes_per_sec";
pub const READ_IOPS: &str = "read_iops";
pub const READ_IOS: &str = "read_ios";
pub const READ_ONLY_AFTER: &str = "read_only_after";
pub const RETRY_FSYNC_ERRNO: &str = "retry_fsync_errno";
pub const RUN_BYTES_PER_SEC: &str = "run_bytes_per_sec";
pub const RUN_IOPS: &str = "run_iops";
pub const RUNTIME_S: &str = "runtime_s";
pub const SEEK_CLOSE_S: &str = "seek_close_s";
pub const SEEK_REWRITES: &str = "seek_rewrites";
pub const SEEKS_PER_SEC: &str = "seeks_per_sec";
pub const SNAPSHOT_SPACE_BYTES: &str = "snapshot_space_bytes";
pub const SNAPSHOTS_DELETED: &str = "snapshots_deleted";
pub const SNAPSHOTS_PER_SEC: &str = "snapshots_per_sec";
pub const SNAPSHOTS_TAKEN: &str = "snapshots_taken";
pub const SPACE_FREED_BYTES: &str = "space_freed_bytes";
pub const SPACE_OVERHEAD_PCT: &str = "space_overhead_pct";
pub const SPACE_USED_BYTES: &str = "space_used_bytes";
pub const STEADY_AT_S: &str = "steady_at_s";
pub const STEADY_BYTES_PER_SEC: &str = "steady_bytes_per_sec";
pub const STEADY_CRITERION: &str = "steady_criterion";
pub const STEADY_IOPS: &str = "steady_iops";
pub const STEADY_LAT_NS: &str = "steady_lat_ns";
pub const STEADY_MAX_DEVIATION: &str = "steady_max_deviation";
pub const STEADY_REACHED: &str = "steady_reached";
pub const STEADY_SLOPE: &str = "steady_slope";
pub const STEADY_WINDOW_S: &str = "steady_window_s";
pub const STONEWALL_ITEMS: &str = "stonewall_items";
pub const STONEWALL_S: &str = "stonewall_s";
pub const SYSTEM_CPU_IOWAIT_PCT: &str = "system_cpu_iowait_pct";
pub const SYSTEM_CPU_SYS_PCT: &str = "system_cpu_sys_pct";
pub const SYSTEM_CPU_USER_PCT: &str = "system_cpu_user_pct";
pub const LATENCY_QD: &str = "latency_qd";
pub const TOO_FAST: &str = "too_fast";
pub const TRIM_BYTES: &str = "trim_bytes";
pub const TRIM_BYTES_PER_SEC: &str = "trim_bytes_per_sec";
pub const TRIM_IOPS: &str = "trim_iops";
pub const TRIM_IOS: &str = "trim_ios";
pub const VERIFIED_BYTES: &str = "verified_bytes";
pub const VERIFY_BLOCKS: &str = "verify_blocks";
pub const VERIFY_BYTES: &str = "verify_bytes";
pub const VERIFY_ERRORS: &str = "verify_errors";
pub const VERIFY_S: &str = "verify_s";
pub const VERIFY_SKIPPED: &str = "verify_skipped";
pub const WRITE_AMPLIFICATION: &str = "write_amplification";
pub const WRITE_BYTES: &str = "write_bytes";
pub const WRITE_BYTES_PER_SEC: &str = "write_bytes_per_sec";
pub const WRITE_IOPS: &str = "write_iops";
pub const WRITE_IOS: &str = "write_ios";
pub const WRONG_IDENTITY: &str = "wrong_identity";
pub const WRONG_SIZE: &str = "wrong_size";
pub const WRONG_TRANSFERS: &str = "wrong_transfers";

/// Every name above, for the test that checks them against the catalogue.
pub const ALL: &[&str] = &[
    AVG_KIB_PER_SEC,
    BLOCK_SIZE,
    BLOCKS_PER_SEC,
    BLOCKS_USED,
    BYTES_FLIPPED,
    BYTES_PER_SEC,
    CACHED_FAILED,
    CACHED_MIXED,
    CACHED_NEW,
    CACHED_OLD,
    CACHED_OTHER,
    CHILDREN_KIB_PER_SEC,
    CONTROLS_DAMAGED,
    CONTROLS_OK,
    CPU_PCT,
    CPU_SYS_PCT,
    CPU_USER_NS_PER_IO,
    CPU_USER_PCT,
    CRC_MISMATCH,
    DETECTED_BY_FS,
    DEVICE_FAILED,
    DEVICE_FAILED_READS,
    DEVICE_FAILED_WRITES,
    DEVICE_FLUSHES,
    DEVICE_MIXED,
    DEVICE_NEW,
    DEVICE_OLD,
    DEVICE_OTHER,
    DEVICE_READ_BYTES,
    DEVICE_WRITE_BYTES,
    DEVICE_WRITES,
    DEVICE_WRITTEN_BYTES,
    END_FSYNC_NS,
    EXHAUSTED_INODES,
    EXHAUSTED_SPACE,
    EXIT_CODE,
    EXTENTS_ENCODED,
    FILES_PER_SEC,
    FILES_TOTAL,
    FIRST_DONE_BYTES_PER_SEC,
    FIRST_DONE_OPS,
    FIRST_DONE_OPS_PER_SEC,
    FIRST_DONE_S,
    FIRST_FSYNC_BLOCKED,
    FIRST_FSYNC_ERRNO,
    FS_BYTES_AVAIL_AFTER,
    FS_DETECTED,
    FS_ERROR_COUNT,
    FS_INODES_FREE_AFTER,
    FSYNC_NS,
    INODES_DYNAMIC,
    INODES_USED,
    INTEGRITY_OK,
    IO500_BW,
    IO500_MD,
    IO500_SCORE,
    IO500_VALUE,
    IOR_CLOSE_S,
    IOR_LATENCY_S,
    IOR_OPEN_S,
    IOR_STONEWALL_BYTES,
    IOR_STONEWALL_S,
    IOR_XFER_S,
    KIB_PER_SEC,
    LAST_DONE_S,
    LAT_P99_NS,
    LAYOUT_SCORE,
    MAX_KIB_PER_SEC,
    MIN_KIB_PER_SEC,
    MOUNTS_AGAIN,
    OPS_PER_SEC,
    OUTSIDE_SYSCALLS_PCT,
    OVERWRITE_SHARE,
    PARENT_KIB_PER_SEC,
    PEAK_RSS_BYTES,
    POST_PRE_RATIO,
    RANK_BYTES_PER_SEC_MAX,
    RANK_BYTES_PER_SEC_MEAN,
    RANK_BYTES_PER_SEC_MIN,
    RANK_OPS_PER_SEC_MAX,
    RANK_OPS_PER_SEC_MEAN,
    RANK_OPS_PER_SEC_MIN,
    RANK_SPREAD_PCT,
    READ_BYTES,
    READ_BYTES_PER_SEC,
    READ_IOPS,
    READ_IOS,
    READ_ONLY_AFTER,
    RETRY_FSYNC_ERRNO,
    RUN_BYTES_PER_SEC,
    RUN_IOPS,
    RUNTIME_S,
    SEEK_CLOSE_S,
    SEEK_REWRITES,
    SEEKS_PER_SEC,
    SNAPSHOT_SPACE_BYTES,
    SNAPSHOTS_DELETED,
    SNAPSHOTS_PER_SEC,
    SNAPSHOTS_TAKEN,
    SPACE_FREED_BYTES,
    SPACE_OVERHEAD_PCT,
    SPACE_USED_BYTES,
    STEADY_AT_S,
    STEADY_BYTES_PER_SEC,
    STEADY_CRITERION,
    STEADY_IOPS,
    STEADY_LAT_NS,
    STEADY_MAX_DEVIATION,
    STEADY_REACHED,
    STEADY_SLOPE,
    STEADY_WINDOW_S,
    STONEWALL_ITEMS,
    STONEWALL_S,
    SYSTEM_CPU_IOWAIT_PCT,
    SYSTEM_CPU_SYS_PCT,
    SYSTEM_CPU_USER_PCT,
    LATENCY_QD,
    TOO_FAST,
    TRIM_BYTES,
    TRIM_BYTES_PER_SEC,
    TRIM_IOPS,
    TRIM_IOS,
    VERIFIED_BYTES,
    VERIFY_BLOCKS,
    VERIFY_BYTES,
    VERIFY_ERRORS,
    VERIFY_S,
    VERIFY_SKIPPED,
    WRITE_AMPLIFICATION,
    WRITE_BYTES,
    WRITE_BYTES_PER_SEC,
    WRITE_IOPS,
    WRITE_IOS,
    WRONG_IDENTITY,
    WRONG_SIZE,
    WRONG_TRANSFERS,
];
