//! MPI's calls (the `mpi` feature), through the C shim beside this file (`mpi.c`, compiled by
//! build.rs against the system's mpi.h): the world's rank and size, messages sent without
//! blocking and received when they are there, MPI's barrier and an all-reduce, abort.
//!
//! A message sent without blocking (MPI_Isend) may be given up on: its bytes are lent to MPI
//! while the send is in flight, freed when it completes, and left to MPI when the sender stops
//! waiting. A blocking MPI_Send of a message too large to go eagerly waits until the receiver
//! takes it; a receiver that stopped never does, and the sender then waited for the launcher's
//! SIGKILL with its target still mounted.

use std::ffi::{c_int, c_void};

extern "C" {
    fn fsb_mpi_init(multiple: *mut c_int) -> c_int;
    fn fsb_mpi_initialized(flag: *mut c_int) -> c_int;
    fn fsb_mpi_finalize() -> c_int;
    fn fsb_mpi_rank(rank: *mut c_int) -> c_int;
    fn fsb_mpi_size(size: *mut c_int) -> c_int;
    fn fsb_mpi_processor_name_max() -> c_int;
    fn fsb_mpi_processor_name(name: *mut u8, len: *mut c_int) -> c_int;
    fn fsb_mpi_isend(
        buf: *const u8,
        len: c_int,
        to: c_int,
        tag: c_int,
        req: *mut *mut c_void,
    ) -> c_int;
    fn fsb_mpi_barrier() -> c_int;
    fn fsb_mpi_test(req: *mut c_void, done: *mut c_int) -> c_int;
    fn fsb_mpi_improbe(
        from: c_int,
        tag: c_int,
        found: *mut c_int,
        source: *mut c_int,
        len: *mut c_int,
        msg: *mut *mut c_void,
    ) -> c_int;
    fn fsb_mpi_mrecv(buf: *mut u8, len: c_int, msg: *mut c_void) -> c_int;
    fn fsb_mpi_allreduce_max_u64(mine: u64, max: *mut u64) -> c_int;
    fn fsb_mpi_abort(code: c_int) -> c_int;
}

/// A message's tag.
pub type Tag = i32;

/// Which threads of the process may call MPI, as MPI_Init_thread granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threading {
    /// Any thread, at any time (MPI_THREAD_MULTIPLE).
    Multiple,
    /// A lesser level: fsbench calls MPI from the coordinator's thread alone, and the workers'
    /// rounds go through it.
    One,
}

/// MPI, initialised for this process; finalised when dropped.
pub struct Universe {
    pub threading: Threading,
}

impl Universe {
    pub fn init() -> Result<Universe, String> {
        let mut flag = 0;
        // SAFETY: MPI_Initialized may be called at any time; it writes one int.
        unsafe { fsb_mpi_initialized(&mut flag) };
        if flag != 0 {
            return Err("MPI was initialised already".into());
        }
        let mut multiple = 0;
        // SAFETY: the first MPI call of the process (checked above); it writes one int.
        let rc = unsafe { fsb_mpi_init(&mut multiple) };
        if rc != 0 {
            return Err(format!("MPI_Init_thread failed (MPI error {rc})"));
        }
        Ok(Universe {
            threading: if multiple != 0 {
                Threading::Multiple
            } else {
                Threading::One
            },
        })
    }

    /// This process's rank in the world.
    pub fn rank(&self) -> usize {
        let mut r = 0;
        // SAFETY: MPI is initialised (self exists); it writes one int.
        unsafe { fsb_mpi_rank(&mut r) };
        r as usize
    }

    /// How many ranks the world has.
    pub fn size(&self) -> usize {
        let mut s = 1;
        // SAFETY: as rank.
        unsafe { fsb_mpi_size(&mut s) };
        s as usize
    }

    /// This node's name as MPI tells it (ranks on one node share it).
    pub fn processor_name(&self) -> Option<String> {
        // SAFETY: a constant of mpi.h.
        let max = unsafe { fsb_mpi_processor_name_max() }.max(1) as usize;
        let mut buf = vec![0u8; max];
        let mut len = 0;
        // SAFETY: `buf` holds MPI_MAX_PROCESSOR_NAME bytes, as MPI_Get_processor_name needs.
        let rc = unsafe { fsb_mpi_processor_name(buf.as_mut_ptr(), &mut len) };
        (rc == 0).then(|| String::from_utf8_lossy(&buf[..(len.max(0) as usize).min(max)]).into())
    }

    /// A message with `tag` from `from` (any rank when None), if one is there: its source and
    /// bytes.
    pub fn poll(&self, from: Option<usize>, tag: Tag) -> Option<(usize, Vec<u8>)> {
        let (mut found, mut source, mut len) = (0, 0, 0);
        let mut msg = std::ptr::null_mut();
        let from = from.map_or(-1, |r| r as c_int);
        // SAFETY: every pointer is to a local the call writes.
        let rc = unsafe { fsb_mpi_improbe(from, tag, &mut found, &mut source, &mut len, &mut msg) };
        if rc != 0 || found == 0 {
            return None;
        }
        let mut buf = vec![0u8; len.max(0) as usize];
        // SAFETY: `msg` is the message just matched, received once (the call frees it), into a
        // buffer of the length MPI gave for it.
        let rc = unsafe { fsb_mpi_mrecv(buf.as_mut_ptr(), len.max(0), msg) };
        (rc == 0).then_some((source as usize, buf))
    }

    /// Ends every rank of the job (MPI_Abort).
    pub fn abort(&self, code: i32) -> ! {
        // SAFETY: MPI is initialised; MPI_Abort does not return where it works.
        unsafe { fsb_mpi_abort(code) };
        std::process::exit(code)
    }
}

/// Ends the process at once, MPI unfinalised (a thread of it waits in a collective that will not
/// complete, where MPI_Finalize and the atexit handlers would wait too): what it printed is
/// flushed first.
pub fn exit_unfinalised(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process; nothing of it runs after.
    unsafe { libc::_exit(code) }
}

impl Drop for Universe {
    fn drop(&mut self) {
        // SAFETY: MPI was initialised by this Universe, and is finalised once.
        unsafe { fsb_mpi_finalize() };
    }
}

/// A send in flight: polled with `done`; a request given up on is left to MPI (the rank is
/// ending).
pub struct Request(*mut c_void);

/// The world's next barrier (MPI_Barrier), as IOR and mdtest call it: it returns once every rank
/// has called it, and nothing else ends the wait. Every rank must call it, as its next
/// collective, while MPI is initialised (a `Universe` lives).
pub fn barrier() {
    // SAFETY: no arguments; MPI's default error handler ends the job on an error.
    unsafe { fsb_mpi_barrier() };
}

/// The largest of every rank's `mine`; as `barrier`.
pub fn max_across(mine: u64) -> u64 {
    let mut max = mine;
    // SAFETY: one u64 in, one out.
    unsafe { fsb_mpi_allreduce_max_u64(mine, &mut max) };
    max
}

impl Request {
    /// Has the request completed (then MPI has freed it)?
    pub fn done(&mut self) -> bool {
        if self.0.is_null() {
            return true;
        }
        let mut done = 0;
        // SAFETY: a live request from the shim, tested until done and never after (nulled).
        let rc = unsafe { fsb_mpi_test(self.0, &mut done) };
        if done != 0 {
            self.0 = std::ptr::null_mut();
        }
        rc != 0 || done != 0
    }
}

/// A message sent without blocking, with the bytes lent to MPI while it is in flight.
pub struct Send {
    req: Request,
    /// The bytes the request reads (from `Box::leak`); None once freed.
    bytes: Option<*mut [u8]>,
}

impl Send {
    pub fn start(_: &Universe, to: usize, tag: Tag, bytes: Vec<u8>) -> Send {
        let lent: &'static mut [u8] = Box::leak(bytes.into_boxed_slice());
        let mut req = std::ptr::null_mut();
        // SAFETY: the bytes live until the request completes (freed in `done`) or forever
        // (leaked when given up on).
        unsafe {
            fsb_mpi_isend(
                lent.as_ptr(),
                lent.len() as c_int,
                to as c_int,
                tag,
                &mut req,
            )
        };
        Send {
            req: Request(req),
            bytes: Some(lent as *mut [u8]),
        }
    }

    /// Has MPI finished with the bytes (then they are freed)?
    pub fn done(&mut self) -> bool {
        if !self.req.done() {
            return false;
        }
        if let Some(b) = self.bytes.take() {
            // SAFETY: `b` came from Box::leak in `start` and is freed only here, once; the one
            // request that read it has completed, so nothing refers to it now.
            drop(unsafe { Box::from_raw(b) });
        }
        true
    }
}
