//! Stopping: signals set a flag, every loop polls it, and the reason travels as a type (never as
//! the text "interrupted"). A leaf module: it imports nothing of fsbench's (what to do with the
//! terminal after a hangup is handed in by the caller).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Why a run stopped before its end.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize,
)]
pub enum StopReason {
    /// SIGINT (Ctrl-C).
    #[error("interrupted by SIGINT")]
    Interrupt,
    /// SIGTERM.
    #[error("interrupted by SIGTERM")]
    Terminate,
    /// SIGHUP: the terminal closed (a dropped SSH session, a closed window).
    #[error("interrupted by SIGHUP (the terminal closed)")]
    Hangup,
}

impl StopReason {
    /// The exit status of a run stopped this way (128 + the signal's number).
    pub fn exit_code(self) -> u8 {
        match self {
            StopReason::Interrupt => 130,
            StopReason::Terminate => 143,
            StopReason::Hangup => 129,
        }
    }
}

static INTERRUPT: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static TERMINATE: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static HANGUP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn flag(cell: &OnceLock<Arc<AtomicBool>>) -> &Arc<AtomicBool> {
    cell.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// SIGINT and SIGTERM set the stop flag: the run stops at the next step, tears down and saves. A
/// second signal of the same kind exits at once; the next start cleans what is left.
///
/// SIGHUP (the terminal closed) gets the same orderly end, but a second SIGHUP never exits at once:
/// a closing terminal may deliver it twice (the kernel to the foreground group, the shell to its
/// jobs), and the run must still tear down. Its handler is the system layer's
/// (`sys::install_hangup`, in the signal handler itself: no thread waits for signals, as a
/// second thread would make every read and write of a single-threaded phase, bonnie++'s
/// per-character tests, take the file position lock); it sets `hangup_flag`.
pub fn install_signal_handlers() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for (sig, cell) in [(SIGINT, &INTERRUPT), (SIGTERM, &TERMINATE)] {
        let f = flag(cell).clone();
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, f.clone())?;
        signal_hook::flag::register(sig, f)?;
    }
    Ok(())
}

/// The flag a SIGHUP sets.
pub fn hangup_flag() -> Arc<AtomicBool> {
    flag(&HANGUP).clone()
}

/// Why the run was asked to stop, if it was.
pub fn requested() -> Option<StopReason> {
    if flag(&INTERRUPT).load(Ordering::Relaxed) {
        Some(StopReason::Interrupt)
    } else if flag(&TERMINATE).load(Ordering::Relaxed) {
        Some(StopReason::Terminate)
    } else if flag(&HANGUP).load(Ordering::Relaxed) {
        Some(StopReason::Hangup)
    } else {
        None
    }
}

/// True once a stop was asked for (polled by every loop).
pub fn stop_requested() -> bool {
    requested().is_some()
}

/// Asks for a stop as if the signal had come (another rank of a multi-rank run was stopped: this
/// one ends the same way, in order).
#[cfg(feature = "mpi")]
pub fn raise(why: StopReason) {
    let cell = match why {
        StopReason::Interrupt => &INTERRUPT,
        StopReason::Terminate => &TERMINATE,
        StopReason::Hangup => &HANGUP,
    };
    flag(cell).store(true, Ordering::SeqCst);
}
