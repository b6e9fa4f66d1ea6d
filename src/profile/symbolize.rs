//! A sampled call chain (addresses, leaf first, with perf's context markers) to the frames of a
//! folded stack (names, root first): kernel frames from kallsyms (`name_[k]`), frames in a
//! process's own binary by its symbols (demangled), frames in a library by the library, and
//! `[unknown]` for what nothing names.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::elf::{self, Mapping, Symbols};
use super::folded::{KERNEL, UNKNOWN};
use super::kallsyms::Kallsyms;

/// perf's markers in a call chain (`enum perf_callchain_context`): the frames after one are in
/// that context; anything at or above `MAX` is a marker.
const CONTEXT_KERNEL: u64 = (-128i64) as u64;
const CONTEXT_USER: u64 = (-512i64) as u64;
const CONTEXT_MAX: u64 = (-4095i64) as u64;

/// A process whose user frames can be named.
struct Proc {
    maps: Vec<Mapping>,
    /// Its binary as maps names it.
    exe: String,
    symbols: Option<Arc<Symbols>>,
}

/// Names frames; remembers what it has named.
pub struct Symbolizer<'k> {
    kernel: &'k Kallsyms,
    procs: HashMap<u32, Proc>,
    names: HashMap<(u32, u64), String>,
    /// Whether the last chain held the entry it was told to cut at.
    entered: bool,
}

/// A binary's symbols, read once per process and binary (fsbench's own is large).
fn symbols_of(pid: u32, exe: &str) -> Option<Arc<Symbols>> {
    type Cache = Mutex<HashMap<(u32, String), Option<Arc<Symbols>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (pid, exe.to_string());
    if let Some(s) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return s.clone();
    }
    let s = Symbols::of_process(pid)
        .filter(|s| !s.is_empty())
        .map(Arc::new);
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, s.clone());
    s
}

impl<'k> Symbolizer<'k> {
    pub fn new(kernel: &'k Kallsyms) -> Symbolizer<'k> {
        Symbolizer {
            kernel,
            procs: HashMap::new(),
            names: HashMap::new(),
            entered: true,
        }
    }

    /// Whether the last chain `stack` named held the entry it was told to cut at (a chain
    /// without it is kept whole: its kernel leaf may be the interrupt's own frames).
    pub fn entered(&self) -> bool {
        self.entered
    }

    /// A process's mappings and binary, given (tests) rather than read.
    pub fn add_process(&mut self, pid: u32, maps: &str, exe: &str, symbols: Option<Arc<Symbols>>) {
        self.procs.insert(
            pid,
            Proc {
                maps: elf::parse_maps(maps),
                exe: exe.to_string(),
                symbols,
            },
        );
    }

    /// Reads a process's mappings and binary (once); a process that is gone names no frame.
    pub fn load_process(&mut self, pid: u32) {
        if self.procs.contains_key(&pid) {
            return;
        }
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let symbols = (!exe.is_empty()).then(|| symbols_of(pid, &exe)).flatten();
        self.add_process(pid, &maps, &exe, symbols);
    }

    fn user(&mut self, pid: u32, pc: u64) -> String {
        if let Some(n) = self.names.get(&(pid, pc)) {
            return n.clone();
        }
        let name = match self.procs.get(&pid) {
            None => UNKNOWN.to_string(),
            Some(p) => match elf::mapping_of(&p.maps, pc) {
                None => UNKNOWN.to_string(),
                Some(m) if m.path == p.exe && !p.exe.is_empty() => p
                    .symbols
                    .as_ref()
                    .and_then(|s| s.at_offset(pc - m.start + m.offset))
                    .map(elf::demangle)
                    .unwrap_or_else(|| elf::library_frame(&m.path)),
                Some(m) => elf::library_frame(&m.path),
            },
        };
        self.names.insert((pid, pc), name.clone());
        name
    }

    fn kernel(&self, pc: u64) -> String {
        format!("{}{KERNEL}", self.kernel.lookup(pc).unwrap_or(UNKNOWN))
    }

    /// The frames of a call chain of process `pid`, root first, under `root` (the process).
    /// `entry`: the kernel frame by which the sample's interrupt came in (the tick's); it and what
    /// lies leafward of it are dropped, and the frame it interrupted is named at its exact address.
    pub fn stack(
        &mut self,
        root: &str,
        pid: u32,
        chain: &[u64],
        entry: Option<&str>,
    ) -> Vec<String> {
        #[derive(PartialEq)]
        enum Ctx {
            Kernel,
            User,
            Other,
        }
        let mut kernel: Vec<String> = Vec::new();
        let mut user: Vec<String> = Vec::new();
        let mut ctx = Ctx::Other;
        let mut first = true;
        self.entered = entry.is_none();
        for &ip in chain {
            if ip >= CONTEXT_MAX {
                ctx = match ip {
                    CONTEXT_KERNEL => Ctx::Kernel,
                    CONTEXT_USER => Ctx::User,
                    _ => Ctx::Other,
                };
                first = true;
                continue;
            }
            // Past the first frame of a context each address is where a call returns to: the
            // call itself is the byte before (a call that ends its function names the right one).
            let pc = if first { ip } else { ip.saturating_sub(1) };
            first = false;
            match ctx {
                Ctx::Kernel if entry.is_some() && self.kernel.lookup(pc) == entry => {
                    // Below the interrupt's entry: the interrupted frame, at its own address.
                    kernel.clear();
                    first = true;
                    self.entered = true;
                }
                Ctx::Kernel => kernel.push(self.kernel(pc)),
                Ctx::User => user.push(self.user(pid, pc)),
                Ctx::Other => {}
            }
        }
        let mut frames = vec![root.to_string()];
        for f in user.into_iter().rev().chain(kernel.into_iter().rev()) {
            // A library's or an unknown frame repeated says nothing more.
            if f.starts_with('[') && frames.last() == Some(&f) {
                continue;
            }
            frames.push(f);
        }
        frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_becomes_root_user_then_kernel_frames() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T entry_SYSCALL_64\n\
             ffffffff81001000 T ksys_write\n\
             ffffffff81002000 T shmem_write_begin\n",
        );
        let mut s = Symbolizer::new(&k);
        s.add_process(
            7,
            "500000-600000 r-xp 00000000 fd:01 1 /usr/bin/fsbench\n\
             700000-800000 r-xp 00000000 fd:01 2 /usr/lib/libc.so.6\n",
            "/usr/bin/fsbench",
            None,
        );
        let chain = [
            CONTEXT_KERNEL,
            0xffffffff81002010,
            0xffffffff81001001, // a return address: the call is the byte before
            0xffffffff81000100,
            CONTEXT_USER,
            0x700010,
            0x700020,
            0x500010,
            0x900000,
        ];
        assert_eq!(
            s.stack("fsbench", 7, &chain, None),
            [
                "fsbench",
                "[unknown]",
                "[fsbench]",
                "[libc.so.6]",
                "entry_SYSCALL_64_[k]",
                "ksys_write_[k]",
                "shmem_write_begin_[k]"
            ]
        );
        // A return address at a function's very start belongs to the call at the end of the one
        // before.
        assert_eq!(
            s.stack("fsbench", 7, &[CONTEXT_KERNEL, 1, 0xffffffff81001000], None),
            ["fsbench", "entry_SYSCALL_64_[k]", "[unknown]_[k]"]
        );
        // A process nothing is known of: its user frames are unknown.
        assert_eq!(
            s.stack("zfs-fuse", 9, &[CONTEXT_USER, 0x500010], None),
            ["zfs-fuse", "[unknown]"]
        );
    }

    #[test]
    fn a_ticks_chain_starts_at_the_frame_its_interrupt_came_in_by() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T entry_SYSCALL_64\n\
             ffffffff81001000 T ksys_write\n\
             ffffffff81002000 T shmem_write_begin\n\
             ffffffff81003000 T asm_sysvec_apic_timer_interrupt\n\
             ffffffff81004000 T sysvec_apic_timer_interrupt\n",
        );
        let mut s = Symbolizer::new(&k);
        let tick = Some(crate::profile::perf::TICK_ENTRY);
        // Interrupted in the kernel: the interrupted frame is its exact address (a function's
        // first byte here, which a return address would name as the function before).
        let chain = [
            CONTEXT_KERNEL,
            0xffffffff81004010,
            0xffffffff81003010,
            0xffffffff81002000,
            0xffffffff81001001,
            0xffffffff81000100,
        ];
        assert_eq!(
            s.stack("fsbench", 7, &chain, tick),
            [
                "fsbench",
                "entry_SYSCALL_64_[k]",
                "ksys_write_[k]",
                "shmem_write_begin_[k]"
            ]
        );
        // Without the entry named, the interrupt's frames stay (an event that is not the tick).
        assert_eq!(s.stack("fsbench", 7, &chain, None).len(), 6);
        // Interrupted in user code: no kernel frame is the thread's.
        let chain = [
            CONTEXT_KERNEL,
            0xffffffff81004010,
            0xffffffff81003010,
            CONTEXT_USER,
            0x500010,
        ];
        assert_eq!(
            s.stack("fsbench", 7, &chain, tick),
            ["fsbench", "[unknown]"]
        );
        assert!(s.entered());
        // A chain without the entry (an older kernel's name for it, FRED): kept whole, and said.
        let chain = [CONTEXT_KERNEL, 0xffffffff81002010, 0xffffffff81000100];
        assert_eq!(s.stack("fsbench", 7, &chain, tick).len(), 3);
        assert!(!s.entered());
    }
}
