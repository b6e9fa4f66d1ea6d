//! Stopping: signals set a flag, every loop polls it, and the reason travels as a type (never as
//! the text "interrupted"). A leaf module: it imports nothing of fsbench's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Why a run stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StopReason {
    /// SIGINT (Ctrl-C).
    #[error("interrupted by SIGINT")]
    Interrupt,
    /// SIGTERM.
    #[error("interrupted by SIGTERM")]
    Terminate,
}

impl StopReason {
    /// The exit status of a run stopped this way (128 + the signal's number).
    pub fn exit_code(self) -> u8 {
        match self {
            StopReason::Interrupt => 130,
            StopReason::Terminate => 143,
        }
    }
}

static INTERRUPT: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static TERMINATE: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn flag(cell: &OnceLock<Arc<AtomicBool>>) -> &Arc<AtomicBool> {
    cell.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// SIGINT and SIGTERM set the stop flag: the run stops at the next step, tears down and saves. A
/// second signal of the same kind exits at once; the next start cleans what is left.
pub fn install_signal_handlers() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for (sig, cell) in [(SIGINT, &INTERRUPT), (SIGTERM, &TERMINATE)] {
        let f = flag(cell).clone();
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, f.clone())?;
        signal_hook::flag::register(sig, f)?;
    }
    Ok(())
}

/// Why the run was asked to stop, if it was.
pub fn requested() -> Option<StopReason> {
    if flag(&INTERRUPT).load(Ordering::Relaxed) {
        Some(StopReason::Interrupt)
    } else if flag(&TERMINATE).load(Ordering::Relaxed) {
        Some(StopReason::Terminate)
    } else {
        None
    }
}

/// True once a stop was asked for (polled by every loop).
pub fn stop_requested() -> bool {
    requested().is_some()
}
