//! An MPI message sent without blocking (MPI_Isend), which the sender may give up on: its bytes
//! are lent to MPI while the send is in flight, freed when it completes, and left to MPI when the
//! sender stops waiting. A blocking MPI_Send of a message too large to go eagerly waits until the
//! receiver takes it; a receiver that stopped never does, and the sender then waited for the
//! launcher's SIGKILL with its target still mounted.

use mpi::point_to_point::Destination;
use mpi::request::{Request, StaticScope};
use mpi::Tag;

pub struct Send {
    /// None once the send completed.
    req: Option<Request<'static, [u8], StaticScope>>,
    /// The bytes the request reads (from `Box::leak`).
    bytes: *mut [u8],
}

impl Send {
    pub fn start(to: &impl Destination, tag: Tag, bytes: Vec<u8>) -> Send {
        let lent: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let ptr = lent as *const [u8] as *mut [u8];
        Send {
            req: Some(to.immediate_send_with_tag(StaticScope, lent, tag)),
            bytes: ptr,
        }
    }

    /// Has MPI finished with the bytes (then they are freed)?
    pub fn done(&mut self) -> bool {
        let Some(req) = self.req.take() else {
            return true;
        };
        match req.test() {
            Ok(_) => {
                // SAFETY: `bytes` came from Box::leak in `start` and is freed only here, once;
                // the one request that read it has completed, so nothing refers to it now.
                drop(unsafe { Box::from_raw(self.bytes) });
                true
            }
            Err(req) => {
                self.req = Some(req);
                false
            }
        }
    }
}

impl Drop for Send {
    /// A send given up on is left to MPI with its bytes (the rank is ending; rsmpi panics on a
    /// request dropped unfinished).
    fn drop(&mut self) {
        if let Some(req) = self.req.take() {
            std::mem::forget(req);
        }
    }
}
