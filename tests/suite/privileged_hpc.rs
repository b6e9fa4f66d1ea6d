//! Privileged tier, the HPC users' own tools on a real ext4 on a loop device: IOR's O_DIRECT
//! file-per-process write and read (the spelling), which the device counts, and mdtest's
//! unique directories with a cache drop asked for. Needs root; holds the serial lock.

use crate::common::*;

#[test]
fn ior_and_mdtest_run_on_a_provisioned_ext4_and_leave_nothing() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("study");
    let o = Compare::new(&["ext4"])
        .workload("ior:-a POSIX --posix.odirect -w -r -F -t 1m -b 32m -e -C")
        .workload("mdtest:-n 200 -u -w 4096 -e 4096 --drop-caches")
        .size("512M")
        .out(out.to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    let get = |t: &str| recs.iter().find(|r| r["test"] == t).unwrap();
    let (w, r) = (get("write"), get("read"));
    for x in [w, r] {
        assert_eq!(x["outcome"], "ok", "{x}");
        assert_eq!(x["metrics"]["bytes"], 32.0 * 1048576.0);
        assert!(
            !x["notes"].to_string().contains("page_cache"),
            "O_DIRECT: {x}"
        );
    }
    // O_DIRECT and fsync inside the phase: the device wrote at least what IOR wrote.
    let dev = w["metrics"]["device_write_bytes"].as_f64().unwrap();
    assert!(dev >= 32.0 * 1048576.0, "{dev}");
    let dr = r["metrics"]["device_read_bytes"].as_f64().unwrap();
    assert!(dr >= 32.0 * 1048576.0, "reads from the device: {dr}");
    // mdtest: the stat and read phases dropped the cache first, and say so.
    let stat = get("file-stat");
    assert!(
        stat["notes"].to_string().contains("--drop-caches"),
        "{stat}"
    );
    assert!(recs.iter().all(|x| x["outcome"] == "ok"), "{recs:?}");
    no_leftovers(wd.path());
}
