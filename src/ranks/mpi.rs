//! The MPI transport (the `mpi` feature): point-to-point messages between rank 0 and every other
//! rank, each send and each wait polled with a deadline, so that a rank that is gone is named and
//! no rank waits forever (MPI's own collectives have no timeout; a blocking MPI_Send of a large
//! message waits until the receiver takes it, which a stopped rank 0 never does).
//!
//! At the start, every rank sends HELLO (its digest of the plan, its processor name); rank 0
//! answers WELCOME (or who differs), then NEWS: the run's identity and every rank's name (the
//! nodes). Around a target, every rank TELLs rank 0 what it provisioned (or nothing) and rank 0
//! sends every rank's word to all in NEWS (`Team::exchange`).
//!
//! Per phase:
//!
//! ```text
//! barrier     ranks 1..N send ARRIVE; rank 0, once it has them all, sends GO
//! stonewall   a rank whose first worker finished sends DONE; rank 0 sends STONE to all at the
//!             first DONE (or its own first finish); each rank snapshots its workers' progress
//! rounds      (agreements in the middle of a phase, `frame::rounds`) ranks 1..N send POST
//!             (round, value); rank 0, once it has every rank's, sends MAX (round, the largest)
//! reduce      ranks 1..N send SHARE (frame::share::Share as JSON); rank 0 combines them and
//!             sends VERDICT (a stop any rank saw, so every rank ends the same way)
//! ```
//!
//! Every message starts with the sequence number of the step it belongs to (checked), then its
//! body. Only the coordinator's thread sends and receives them. The rounds go another way where
//! the MPI library lets any thread call it (MPI_THREAD_MULTIPLE): the worker that settles a
//! round calls MPI's barrier (and, for a maximum, MPI's all-reduce) itself, as IOR and mdtest
//! do (`Collectives`). Nothing ends a wait in MPI's barrier but every rank's call: a rank whose
//! worker still waits there `STRANDED` after a stop waits for a rank that hangs or died, and ends
//! at once (`Mpi::strand`: its last word, the manifest's `rank_failure` on rank 0 and its own
//! targets torn down, then exit).

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use crate::sys::mpi::{Tag, Threading, Universe};

use super::collectives::Collectives;
use super::Team;
use crate::frame::cluster::Meet;
use crate::frame::share::{combine, Share};
use crate::frame::{Cluster, Merged, Rank, RunError};
use crate::stop::StopReason;

const ARRIVE: Tag = 1;
const GO: Tag = 2;
const DONE: Tag = 3;
const STONE: Tag = 4;
const SHARE: Tag = 5;
const VERDICT: Tag = 6;
const HELLO: Tag = 7;
const WELCOME: Tag = 8;
const NEWS: Tag = 9;
const TELL: Tag = 10;
const POST: Tag = 11;
const MAX: Tag = 12;

/// How long rank 0 still listens for the others once a stop was requested (they were most likely
/// signalled too, and report within milliseconds); the launcher's SIGKILL follows SIGTERM
/// after `odls_base_sigkill_timeout` (1 s by default).
const GRACE: Duration = Duration::from_millis(300);

/// How long a worker may still wait in MPI's barrier after a stop (and after it entered) before
/// its rank counts as stranded. Ranks that stopped in order reach it within this even on a
/// loaded host, where a worker that looks for a stop every 4,096 calls (`io::calls::stopped`)
/// may go on for seconds (3 s was too short with two busy loops beside two ranks at nice 10).
/// Within Slurm's 30 s between SIGTERM and SIGKILL (KillWait).
const STRANDED: Duration = Duration::from_secs(10);

/// Where a phase's stonewall stands on this rank.
#[derive(Debug, Clone, Copy, Default)]
struct Wall {
    /// Ranks 1..N: DONE sent; STONE received.
    done_sent: bool,
    stone: bool,
    /// Rank 0: STONE sent.
    sent: bool,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Hello {
    digest: String,
    host: String,
    pid: u32,
}

/// Rank 0's answer at the start: the run's identity, and every rank's processor name (the nodes).
#[derive(serde::Serialize, serde::Deserialize)]
struct Start {
    offer: String,
    hosts: Vec<String>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Verdict {
    stop: Option<StopReason>,
    error: Option<String>,
}

pub struct Mpi {
    world: Universe,
    rank: Rank,
    host: String,
    /// Rank 0: every rank's host and process id (from the agreement), for messages.
    who: RefCell<Vec<String>>,
    /// Every rank's node (from the agreement).
    nodes: RefCell<super::Nodes>,
    timeout: Duration,
    seq: Cell<u64>,
    /// The step the ranks are at ("phase 'write' of files on nfs"), for messages.
    at: RefCell<String>,
    wall: Cell<Wall>,
    /// Rank 0: the ranks whose DONE of this phase has come.
    done_from: RefCell<Vec<bool>>,
    /// Rank 0: each round of this phase's agreements, every rank's value so far.
    posts: RefCell<std::collections::BTreeMap<u32, Vec<Option<u64>>>>,
    /// The rounds' collectives, where any thread may call MPI.
    collectives: Option<Collectives>,
    /// When the coordinator's thread first saw the stop (for a wait in `collectives`).
    stop_seen: Cell<Option<Instant>>,
    /// What this rank does before it ends at once (`Team::last_word`).
    last_word: RefCell<Option<super::LastWord>>,
}

/// A round's message: its number and a value.
fn round_body(round: u32, v: u64) -> Vec<u8> {
    let mut b = round.to_le_bytes().to_vec();
    b.extend_from_slice(&v.to_le_bytes());
    b
}

fn read_round(b: &[u8]) -> Option<(u32, u64)> {
    let round = u32::from_le_bytes(b.get(..4)?.try_into().ok()?);
    let v = u64::from_le_bytes(b.get(4..12)?.try_into().ok()?);
    Some((round, v))
}

/// Why a wait ended without the message.
enum Missed {
    Timeout,
    Stopped(StopReason),
}

impl Mpi {
    pub fn init(timeout: Duration) -> Result<Mpi, String> {
        let world = Universe::init()?;
        let rank = Rank {
            index: world.rank(),
            size: world.size(),
        };
        let host = world
            .processor_name()
            .unwrap_or_else(|| crate::sys::host::Environment::probe().hostname);
        let nodes = super::Nodes::one(&host);
        Ok(Mpi {
            collectives: (world.threading == Threading::Multiple).then(Collectives::new),
            world,
            rank,
            host,
            who: RefCell::new(Vec::new()),
            nodes: RefCell::new(nodes),
            timeout,
            seq: Cell::new(0),
            at: RefCell::new("the start".into()),
            wall: Cell::new(Wall::default()),
            done_from: RefCell::new(vec![false; rank.size]),
            posts: RefCell::new(Default::default()),
            stop_seen: Cell::new(None),
            last_word: RefCell::new(None),
        })
    }

    /// Whether this rank's worker waits in MPI's barrier; ends the rank at once when it has
    /// waited there `STRANDED` after a stop (and after it entered): the ranks that stopped in
    /// order have all made their calls by then.
    fn watch_collectives(&self) -> bool {
        let Some(entered) = self
            .collectives
            .as_ref()
            .and_then(Collectives::waiting_since)
        else {
            return false;
        };
        if let Some(why) = crate::stop::requested() {
            let seen = self.stop_seen.get().unwrap_or_else(Instant::now);
            self.stop_seen.set(Some(seen));
            if seen.max(entered).elapsed() >= STRANDED {
                self.strand(why);
            }
        }
        true
    }

    /// This rank's worker waits in MPI's barrier for a rank that will not come: the error says
    /// which ranks had not finished the phase (rank 0 knows), the last word records it and tears
    /// this rank's targets down, and the process ends without finalising MPI (a thread is in it).
    fn strand(&self, why: StopReason) -> ! {
        let mut unfinished = Vec::new();
        if self.rank.leads() {
            // The DONEs that came while the worker waited (the coordinator left MPI alone).
            let seq = self.seq.get();
            while let Some((r, s, _)) = self.poll(None, DONE) {
                if let (true, Some(d)) = (s == seq, self.done_from.borrow_mut().get_mut(r)) {
                    *d = true;
                }
            }
            let done = self.done_from.borrow();
            unfinished = (1..self.rank.size)
                .filter(|r| !done[*r])
                .map(|r| self.name(r))
                .collect();
        }
        let msg = format!(
            "{why}; rank {} waits in MPI's barrier at {}, which a rank that hangs or died does not reach{}",
            self.rank.index,
            self.at.borrow(),
            match unfinished.len() {
                0 => String::new(),
                1 => format!(": {} had not finished its work", unfinished[0]),
                _ => format!(": {} had not finished their work", unfinished.join(", ")),
            }
        );
        crate::out::eline!("fsbench: error: {msg}");
        if let Some(last) = self.last_word.borrow().as_ref() {
            last(&msg);
        }
        crate::sys::mpi::exit_unfinalised(why.exit_code().into())
    }

    /// Sends a message with `tag` for step `seq`, waiting (as `wait` does) until MPI has taken
    /// it: a receiver that stopped never takes a large one, and a stop ends this wait too. The
    /// stonewall and the rounds, called while the workers run, drop the error: the reduce's own
    /// wait meets the same stop.
    fn send(&self, to: usize, tag: Tag, seq: u64, body: &[u8]) -> Result<(), RunError> {
        let mut buf = Vec::with_capacity(8 + body.len());
        buf.extend_from_slice(&seq.to_le_bytes());
        buf.extend_from_slice(body);
        let mut sent = crate::sys::mpi::Send::start(&self.world, to, tag, buf);
        self.until(|| sent.done().then_some(()))
            .map_err(|m| self.missed(m, &self.name(to), "take a message"))
    }

    /// A message with `tag` from `from` (any rank when None), if one is there.
    fn poll(&self, from: Option<usize>, tag: Tag) -> Option<(usize, u64, Vec<u8>)> {
        let (source, mut v) = self.world.poll(from, tag)?;
        let seq = v
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .unwrap_or(u64::MAX);
        v.drain(..v.len().min(8));
        Some((source, seq, v))
    }

    /// Waits for a message with `tag` from `from` until the deadline, or a stop (after the
    /// grace).
    fn wait(&self, from: Option<usize>, tag: Tag) -> Result<(usize, u64, Vec<u8>), Missed> {
        self.until(|| self.poll(from, tag))
    }

    /// Polls `ready` until it gives a value, the deadline passes, or a stop (after the grace).
    fn until<T>(&self, mut ready: impl FnMut() -> Option<T>) -> Result<T, Missed> {
        let t0 = Instant::now();
        let mut stopped: Option<(StopReason, Instant)> = None;
        loop {
            if let Some(m) = ready() {
                return Ok(m);
            }
            if stopped.is_none() {
                stopped = crate::stop::requested().map(|w| (w, Instant::now()));
            }
            if let Some((why, at)) = stopped {
                if at.elapsed() >= GRACE {
                    return Err(Missed::Stopped(why));
                }
            }
            if t0.elapsed() >= self.patience() {
                return Err(Missed::Timeout);
            }
            // Tight at first (a barrier's exit is what the ranks' clocks are measured from),
            // then gentle on an oversubscribed machine.
            std::thread::sleep(if t0.elapsed() < Duration::from_millis(20) {
                Duration::from_micros(50)
            } else {
                Duration::from_millis(1)
            });
        }
    }

    /// How long this rank waits: rank 0 the timeout, the others a little longer, so that when a
    /// rank hangs, rank 0 is the one that notices first and writes the manifest.
    fn patience(&self) -> Duration {
        if self.rank.leads() {
            self.timeout
        } else {
            self.timeout + Duration::from_secs(5).max(self.timeout / 10)
        }
    }

    fn name(&self, r: usize) -> String {
        match self.who.borrow().get(r) {
            Some(w) => format!("rank {r} ({w})"),
            None => format!("rank {r}"),
        }
    }

    fn missed(&self, m: Missed, whom: &str, what: &str) -> RunError {
        let at = self.at.borrow();
        match m {
            Missed::Timeout => RunError::Ranks(format!(
                "{whom} did not {what} at {at} within {} s (--rank-timeout): a rank is gone or hangs",
                self.patience().as_secs()
            )),
            Missed::Stopped(why) => RunError::Ranks(format!(
                "{why}; {whom} did not {what} at {at} (a rank that died makes the launcher stop the others)"
            )),
        }
    }

    /// Rank 0: one message with `tag` and sequence `seq` from every other rank.
    fn gather(&self, tag: Tag, seq: u64, what: &str) -> Result<Vec<(usize, Vec<u8>)>, RunError> {
        self.gather_rest(tag, seq, what, vec![None; self.rank.size])
    }

    /// Rank 0: the messages of `gather` that are not in `got` yet (a rank's slot is Some once its
    /// message came); a rank still missing at the deadline is named.
    fn gather_rest(
        &self,
        tag: Tag,
        seq: u64,
        what: &str,
        mut got: Vec<Option<Vec<u8>>>,
    ) -> Result<Vec<(usize, Vec<u8>)>, RunError> {
        while (1..self.rank.size).any(|r| got[r].is_none()) {
            match self.wait(None, tag) {
                Ok((r, s, body)) if s == seq && r < got.len() => got[r] = Some(body),
                Ok((r, s, _)) => {
                    return Err(RunError::Ranks(format!(
                    "{} sent step {s} where step {seq} was due at {}: the ranks are out of step",
                    self.name(r),
                    self.at.borrow()
                )))
                }
                Err(m) => {
                    let missing: Vec<String> = (1..self.rank.size)
                        .filter(|r| got[*r].is_none())
                        .map(|r| self.name(r))
                        .collect();
                    return Err(self.missed(m, &missing.join(", "), what));
                }
            }
        }
        Ok(got
            .into_iter()
            .enumerate()
            .filter_map(|(r, b)| b.map(|b| (r, b)))
            .collect())
    }

    /// Ranks 1..N: rank 0's message with `tag` for step `seq`.
    fn of_root(&self, tag: Tag, seq: u64, what: &str) -> Result<Vec<u8>, RunError> {
        match self.wait(Some(0), tag) {
            Ok((_, s, body)) if s == seq => Ok(body),
            Ok((_, s, _)) => Err(RunError::Ranks(format!(
                "rank 0 sent step {s} where step {seq} was due at {}: the ranks are out of step",
                self.at.borrow()
            ))),
            Err(m) => Err(self.missed(m, "rank 0", what)),
        }
    }

    /// This rank's figures as they travel to rank 0.
    fn share(&self, local: &Merged) -> Share {
        let node = self.nodes.borrow().node_of(self.rank.index);
        Share::of(local, self.rank.index, &self.host, node)
    }

    fn next(&self) -> u64 {
        let s = self.seq.get() + 1;
        self.seq.set(s);
        s
    }

    fn to_all(&self, tag: Tag, seq: u64, body: &[u8]) -> Result<(), RunError> {
        for r in 1..self.rank.size {
            self.send(r, tag, seq, body)?;
        }
        Ok(())
    }
}

impl Cluster for Mpi {
    fn rank(&self) -> Rank {
        self.rank
    }

    fn barrier(&self, what: &str) -> Result<(), RunError> {
        *self.at.borrow_mut() = what.to_string();
        self.wall.set(Wall::default());
        self.done_from.borrow_mut().fill(false);
        self.posts.borrow_mut().clear();
        let seq = self.next();
        if self.rank.leads() {
            self.gather(ARRIVE, seq, "reach the barrier")?;
            self.to_all(GO, seq, &[])?;
        } else {
            self.send(0, ARRIVE, seq, &[])?;
            self.of_root(GO, seq, "open the barrier")?;
        }
        Ok(())
    }

    fn stonewall(&self, first: bool) -> bool {
        let waiting = self.watch_collectives();
        let seq = self.seq.get();
        let mut w = self.wall.get();
        if waiting {
            // The worker waits in MPI's barrier: MPI is left to it (a call of this thread's
            // meanwhile let the ranks leave it later; docs/performance.md). The wall waits.
            return if self.rank.leads() { w.sent } else { w.stone };
        }
        if self.rank.leads() {
            if !w.sent {
                let mut any = false;
                while let Some((r, s, _)) = self.poll(None, DONE) {
                    if s == seq && r < self.rank.size {
                        self.done_from.borrow_mut()[r] = true;
                        any = true;
                    }
                }
                if first || any {
                    let _ = self.to_all(STONE, seq, &[]);
                    w.sent = true;
                }
            }
            self.wall.set(w);
            return w.sent;
        }
        if first && !w.done_sent {
            let _ = self.send(0, DONE, seq, &[]);
            w.done_sent = true;
        }
        if !w.stone && self.poll(Some(0), STONE).is_some() {
            w.stone = true;
        }
        self.wall.set(w);
        w.stone
    }

    fn max_across(&self, round: u32, mine: Option<u64>) -> Option<u64> {
        let seq = self.seq.get();
        if !self.rank.leads() {
            if let Some(v) = mine {
                let _ = self.send(0, POST, seq, &round_body(round, v));
            }
            let (_, s, body) = self.poll(Some(0), MAX)?;
            return read_round(&body)
                .filter(|(r, _)| s == seq && *r == round)
                .map(|(_, v)| v);
        }
        let mut posts = self.posts.borrow_mut();
        let size = self.rank.size;
        if let Some(v) = mine {
            posts.entry(round).or_insert_with(|| vec![None; size])[0] = Some(v);
        }
        while let Some((r, s, body)) = self.poll(None, POST) {
            if let (true, Some((k, v))) = (s == seq && r < size, read_round(&body)) {
                posts.entry(k).or_insert_with(|| vec![None; size])[r] = Some(v);
            }
        }
        let all = posts.get(&round)?;
        let max = all
            .iter()
            .copied()
            .collect::<Option<Vec<u64>>>()?
            .into_iter()
            .max()?;
        posts.remove(&round);
        let _ = self.to_all(MAX, seq, &round_body(round, max));
        Some(max)
    }

    fn meet(&self) -> Option<&dyn Meet> {
        self.collectives.as_ref().map(|c| c as &dyn Meet)
    }

    fn reduce(&self, local: Merged) -> Result<Merged, RunError> {
        let seq = self.seq.get();
        let mut w = self.wall.get();
        if !self.rank.leads() {
            if !w.done_sent {
                self.send(0, DONE, seq, &[])?;
            }
            if !w.stone {
                self.of_root(STONE, seq, "signal the first finish")?;
            }
            let share = self.share(&local);
            let body = serde_json::to_vec(&share).expect("a share serialises");
            self.send(0, SHARE, seq, &body)?;
            let v: Verdict =
                serde_json::from_slice(&self.of_root(VERDICT, seq, "answer the figures")?)
                    .map_err(|e| RunError::Ranks(format!("rank 0's verdict does not read: {e}")))?;
            if let Some(e) = v.error {
                return Err(RunError::Ranks(e));
            }
            let mut local = local;
            if let (Some(why), Some(p)) = (v.stop, local.parts.first_mut()) {
                // Another rank was stopped: this one ends the same way.
                crate::stop::raise(why);
                p.stopped = p.stopped.or(Some(why));
            }
            return Ok(local);
        }
        if !w.sent {
            self.to_all(STONE, seq, &[])?;
            w.sent = true;
            self.wall.set(w);
        }
        // Every rank sends one DONE per phase; some came while the workers ran.
        let dones = self
            .done_from
            .borrow()
            .iter()
            .map(|d| d.then(Vec::new))
            .collect();
        self.gather_rest(DONE, seq, "finish its work", dones)?;
        let mut shares = vec![self.share(&local)];
        for (r, body) in self.gather(SHARE, seq, "send its figures")? {
            let s: Share = serde_json::from_slice(&body).map_err(|e| {
                RunError::Ranks(format!("{}'s figures do not read: {e}", self.name(r)))
            })?;
            shares.push(s);
        }
        let stop = shares
            .iter()
            .flat_map(|s| s.parts.iter())
            .find_map(|p| p.stopped)
            .or_else(crate::stop::requested);
        let merged = combine(local, shares);
        let verdict = Verdict {
            stop,
            error: merged.as_ref().err().cloned(),
        };
        self.to_all(
            VERDICT,
            seq,
            &serde_json::to_vec(&verdict).expect("a verdict serialises"),
        )?;
        merged.map_err(RunError::Ranks)
    }
}

impl Team for Mpi {
    fn cluster(&self) -> &dyn Cluster {
        self
    }

    fn host(&self) -> &str {
        &self.host
    }

    fn agree(&self, digest: &str, offer: &str) -> Result<String, RunError> {
        let seq = self.next();
        let hello = Hello {
            digest: digest.to_string(),
            host: self.host.clone(),
            pid: std::process::id(),
        };
        if !self.rank.leads() {
            self.send(0, HELLO, seq, &serde_json::to_vec(&hello).expect("json"))?;
            let v: Verdict =
                serde_json::from_slice(&self.of_root(WELCOME, seq, "answer at the start")?)
                    .map_err(|e| RunError::Ranks(format!("rank 0's answer does not read: {e}")))?;
            if let Some(e) = v.error {
                return Err(RunError::Invalid(e));
            }
            let start: Start =
                serde_json::from_slice(&self.of_root(NEWS, seq, "send the run's identity")?)
                    .map_err(|e| RunError::Ranks(format!("rank 0's answer does not read: {e}")))?;
            *self.nodes.borrow_mut() = super::Nodes::group(&start.hosts);
            return Ok(start.offer);
        }
        let mut who = vec![format!("host {}, pid {}", hello.host, hello.pid)];
        let mut hosts = vec![hello.host.clone(); self.rank.size];
        let mut differ = Vec::new();
        for (r, body) in self.gather(HELLO, seq, "start")? {
            let h: Hello = serde_json::from_slice(&body)
                .map_err(|e| RunError::Ranks(format!("rank {r}'s greeting does not read: {e}")))?;
            who.resize(r + 1, String::new());
            who[r] = format!("host {}, pid {}", h.host, h.pid);
            if let Some(slot) = hosts.get_mut(r) {
                slot.clone_from(&h.host);
            }
            if h.digest != digest {
                differ.push(format!("rank {r} ({})", h.host));
            }
        }
        *self.who.borrow_mut() = who;
        let error = (!differ.is_empty()).then(|| {
            format!(
                "{} {} a different plan than rank 0 (another fsbench version, other arguments or another job file): start every rank with the same binary and arguments",
                differ.join(", "),
                if differ.len() == 1 { "runs" } else { "run" }
            )
        });
        let v = Verdict {
            stop: None,
            error: error.clone(),
        };
        self.to_all(WELCOME, seq, &serde_json::to_vec(&v).expect("json"))?;
        if let Some(e) = error {
            return Err(RunError::Invalid(e));
        }
        let start = Start {
            offer: offer.to_string(),
            hosts,
        };
        *self.nodes.borrow_mut() = super::Nodes::group(&start.hosts);
        self.to_all(NEWS, seq, &serde_json::to_vec(&start).expect("json"))?;
        Ok(offer.to_string())
    }

    fn nodes(&self) -> super::Nodes {
        self.nodes.borrow().clone()
    }

    fn exchange(&self, what: &str, text: Option<String>) -> Result<Vec<Option<String>>, RunError> {
        *self.at.borrow_mut() = what.to_string();
        let seq = self.next();
        if !self.rank.leads() {
            self.send(0, TELL, seq, &serde_json::to_vec(&text).expect("json"))?;
            let all = self.of_root(NEWS, seq, "tell every rank's word")?;
            return serde_json::from_slice(&all).map_err(|e| {
                RunError::Ranks(format!("rank 0's word on {what} does not read: {e}"))
            });
        }
        let mut all = vec![text];
        all.resize(self.rank.size, None);
        for (r, body) in self.gather(TELL, seq, "tell what it has")? {
            all[r] = serde_json::from_slice(&body).map_err(|e| {
                RunError::Ranks(format!(
                    "{}'s word on {what} does not read: {e}",
                    self.name(r)
                ))
            })?;
        }
        self.to_all(NEWS, seq, &serde_json::to_vec(&all).expect("json"))?;
        Ok(all)
    }

    fn abandon(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    fn last_word(&self, word: super::LastWord) {
        *self.last_word.borrow_mut() = Some(word);
    }
}
