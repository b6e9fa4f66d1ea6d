//! Standard output and standard error, the one place fsbench prints (`tests/suite/architecture.rs`
//! refuses `println!` and `eprintln!` elsewhere).
//!
//! Standard output that a closed pipe ends quietly: `fsbench report DIR --format json | head`
//! stops printing when `head` has read enough, without a panic or a message, and the command
//! goes on to its end (a compare still writes its report files and tears its targets down). Any
//! other failure (ENOSPC: `fsbench completions bash > /dev/full`) is remembered: the command ends
//! with exit 1 and says so (`failed`), so a script never takes truncated output for whole.
//!
//! Standard error that closes (`fsbench compare ... 2>&1 | head -1`) is let go: messages to it
//! are dropped, and the run measures, records, tears down and ends as it would have (std's
//! `eprintln!` panics there). SIGPIPE stays ignored, so a closed pipe never kills a run that
//! holds mounts.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

static CLOSED: AtomicBool = AtomicBool::new(false);
static FAILED: OnceLock<String> = OnceLock::new();
static ERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output and flushes it. After a failed write nothing more is
/// written; a failure other than a closed pipe is kept for `failed`.
pub fn print(text: &str) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(text.as_bytes()).and_then(|_| o.flush()) {
        CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != ErrorKind::BrokenPipe {
            let _ = FAILED.set(e.to_string());
        }
    }
}

/// `print` with a newline.
pub fn line(text: &str) {
    print(&format!("{text}\n"));
}

/// Why standard output could not be written, when it was not a closed pipe: what was printed
/// is incomplete.
pub fn failed() -> Option<&'static str> {
    FAILED.get().map(String::as_str)
}

/// Writes `text` to standard error; once a write has failed (a closed pipe, a full disk),
/// nothing more is tried and nothing is said.
pub fn to_stderr(text: &str) {
    if ERR_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut e = std::io::stderr().lock();
    if e.write_all(text.as_bytes())
        .and_then(|_| e.flush())
        .is_err()
    {
        ERR_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// A line to standard error, formatted as `eprintln!` does, that a closed standard error drops.
macro_rules! eline {
    ($($arg:tt)*) => {
        $crate::out::to_stderr(&format!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use eline;
