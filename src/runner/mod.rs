//! The coordinator: provision -> phases with cache drops -> persist each record -> teardown.

pub mod compare;
pub mod io;
pub mod jobrun;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static INTERRUPT: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static TERMINATE: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn flag(cell: &OnceLock<Arc<AtomicBool>>) -> &Arc<AtomicBool> {
    cell.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// SIGINT and SIGTERM set a stop flag: the run stops at the next step, tears down and saves.
/// A second signal of the same kind exits at once; the next start cleans what is left.
pub fn install_signal_handlers() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for (sig, cell) in [(SIGINT, &INTERRUPT), (SIGTERM, &TERMINATE)] {
        let f = flag(cell).clone();
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, f.clone())?;
        signal_hook::flag::register(sig, f)?;
    }
    Ok(())
}

pub fn stop_requested() -> bool {
    flag(&INTERRUPT).load(Ordering::Relaxed) || flag(&TERMINATE).load(Ordering::Relaxed)
}

/// The exit code for a run stopped by a signal (128 + signal number), if it was.
pub fn stop_exit_code() -> Option<i32> {
    if flag(&INTERRUPT).load(Ordering::Relaxed) {
        Some(130)
    } else if flag(&TERMINATE).load(Ordering::Relaxed) {
        Some(143)
    } else {
        None
    }
}

/// sync(2), then drop the page cache, dentries and inodes. Returns false if the caches could not
/// be dropped (not root), so that the reads that follow are flagged.
pub fn sync_and_drop_caches() -> bool {
    let _ = std::process::Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok()
}
