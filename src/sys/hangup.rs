//! The terminal hanging up: SIGHUP's handler, and the standard descriptors that were the
//! terminal pointed at /dev/null so that no later message fails on the dead terminal.

use std::io;

/// What to do after the terminal hung up: the standard input, output and error that were the
/// terminal when fsbench started (`note_terminals`; a hung-up terminal no longer answers isatty)
/// will read from and write to /dev/null, so that no later message fails (or panics) on the dead
/// terminal. Outputs redirected to files or pipes are left as they are. Async-signal-safe
/// (atomics, open, dup2, close): it runs in the SIGHUP handler.
pub fn quiet_terminals() {
    let ttys = TTYS.load(std::sync::atomic::Ordering::SeqCst);
    // SAFETY: open, dup2 and close on plain descriptors; nothing is shared with Rust.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null < 0 {
            return;
        }
        for fd in (0..3).filter(|fd| ttys & (1 << fd) != 0) {
            libc::dup2(null, fd);
        }
        libc::close(null);
    }
}

/// Which of the standard descriptors 0-2 are a terminal (a bit each), noted at start.
static TTYS: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// SIGHUP's handler: on the first one, `quiet_terminals` and then `flag` set (the run ends in
/// order); later ones are ignored. It runs in the signal handler, with no thread of its own.
/// A SIGHUP ignored when fsbench started (`nohup fsbench ...`, a service manager's choice) stays
/// ignored: whoever started it asked for the run to outlive its terminal.
pub fn install_hangup(flag: std::sync::Arc<std::sync::atomic::AtomicBool>) -> io::Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    static SEEN: AtomicBool = AtomicBool::new(false);
    if hangup_ignored() {
        return Ok(());
    }
    // SAFETY: the action only swaps and stores atomics and calls quiet_terminals (atomics, open,
    // dup2, close): all async-signal-safe (signal_hook::low_level::register's requirement).
    unsafe {
        signal_hook::low_level::register(signal_hook::consts::SIGHUP, move || {
            if !SEEN.swap(true, Ordering::SeqCst) {
                quiet_terminals();
                flag.store(true, Ordering::SeqCst);
            }
        })?;
    }
    Ok(())
}

/// Whether SIGHUP is ignored in this process (as nohup leaves it for what it starts).
pub fn hangup_ignored() -> bool {
    // SAFETY: sigaction with a null new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Notes which standard descriptors are the terminal, for `quiet_terminals`.
pub fn note_terminals() {
    // SAFETY: isatty on the three standard descriptors.
    let mask = (0..3)
        .filter(|&fd| unsafe { libc::isatty(fd) } == 1)
        .fold(0u8, |m, fd| m | 1 << fd);
    TTYS.store(mask, std::sync::atomic::Ordering::SeqCst);
}
