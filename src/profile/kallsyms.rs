//! Kernel symbols from /proc/kallsyms, as the kernel shows them to fsbench: with KASLR the
//! addresses are the running kernel's (root, or kernel.kptr_restrict=0 with
//! kernel.perf_event_paranoid at most 1); otherwise every address reads 0 and no kernel frame
//! can be named.

use std::sync::{Arc, Mutex};

/// The kernel's text symbols, by address.
#[derive(Debug, Default)]
pub struct Kallsyms {
    syms: Vec<(u64, Box<str>)>,
    /// The file listed symbols but showed every address as 0.
    pub hidden: bool,
}

/// A kernel address further than this past the nearest symbol is not that symbol's.
const REACH: u64 = 1 << 20;

impl Kallsyms {
    /// The text symbols (`t`/`T`) of a kallsyms file's text, modules' included.
    pub fn parse(text: &str) -> Kallsyms {
        let mut syms = Vec::new();
        let mut listed = 0usize;
        for line in text.lines() {
            let mut it = line.split_ascii_whitespace();
            let (Some(addr), Some(kind), Some(name)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            if !matches!(kind, "t" | "T") {
                continue;
            }
            listed += 1;
            match u64::from_str_radix(addr, 16) {
                Ok(a) if a != 0 => syms.push((a, Box::from(name))),
                _ => {}
            }
        }
        syms.sort_by_key(|s| s.0);
        Kallsyms {
            hidden: listed > 0 && syms.is_empty(),
            syms,
        }
    }

    /// The function holding `ip`.
    pub fn lookup(&self, ip: u64) -> Option<&str> {
        let i = self.syms.partition_point(|s| s.0 <= ip);
        let (addr, name) = self.syms.get(i.checked_sub(1)?)?;
        (ip - addr < REACH).then_some(&**name)
    }

    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// Whether a text symbol of this name is listed.
    pub fn has(&self, name: &str) -> bool {
        self.syms.iter().any(|(_, n)| &**n == name)
    }
}

/// This host's kernel symbols, read again whenever the loaded modules changed (a filesystem's
/// module loads when a later target mounts it: its functions would otherwise take the name of
/// whatever symbol lay below them).
pub fn host() -> Arc<Kallsyms> {
    static K: Mutex<Option<(String, Arc<Kallsyms>)>> = Mutex::new(None);
    let modules = std::fs::read_to_string("/proc/modules").unwrap_or_default();
    let mut k = K.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, syms)) = k.as_ref().filter(|(m, _)| *m == modules) {
        return syms.clone();
    }
    let syms = Arc::new(
        std::fs::read_to_string("/proc/kallsyms")
            .map(|t| Kallsyms::parse(&t))
            .unwrap_or_default(),
    );
    *k = Some((modules, syms.clone()));
    syms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_addresses_are_named_by_the_nearest_text_symbol_below() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T _stext\n\
             ffffffff81200000 t btrfs_file_write_iter\t[btrfs]\n\
             ffffffff81100000 T shmem_write_begin\n\
             ffffffff81100100 D some_data\n\
             junk\n",
        );
        assert!(!k.hidden);
        assert_eq!(k.lookup(0xffffffff81100042), Some("shmem_write_begin"));
        assert_eq!(k.lookup(0xffffffff81100100), Some("shmem_write_begin"));
        assert_eq!(k.lookup(0xffffffff81200001), Some("btrfs_file_write_iter"));
        assert_eq!(k.lookup(0xffffffff80000000), None);
        assert_eq!(k.lookup(0xffffffff81200000 + REACH), None);
    }

    #[test]
    fn addresses_shown_as_zero_mean_the_kernel_hides_them() {
        let k = Kallsyms::parse("0000000000000000 T _stext\n0000000000000000 t foo\n");
        assert!(k.hidden && k.is_empty());
        assert_eq!(k.lookup(0xffffffff81000000), None);
        assert!(!Kallsyms::parse("").hidden);
    }
}
