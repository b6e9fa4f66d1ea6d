//! Standard output that a closed pipe ends quietly: `fsbench report DIR --format json | head`
//! stops printing when `head` has read enough, without a panic or a message, and the command
//! goes on to its end (a compare still writes its report files and tears its targets down).
//! SIGPIPE stays ignored, so a closed pipe never kills a run that holds mounts.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output and flushes it. After a broken pipe nothing more is written;
/// any other error is reported once on standard error.
pub fn print(text: &str) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(text.as_bytes()).and_then(|_| o.flush()) {
        CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != ErrorKind::BrokenPipe {
            eprintln!("fsbench: warning: cannot write to standard output: {e}");
        }
    }
}

/// `print` with a newline.
pub fn line(text: &str) {
    print(&format!("{text}\n"));
}
