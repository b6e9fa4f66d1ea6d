//! User-space frames: a process's executable mappings (/proc/PID/maps) and the symbols of its
//! own binary (the ELF symbol table, read through /proc/PID/exe, so a binary replaced on disk
//! since the process started is still the one read), demangled. Frames in a shared library are
//! named by the library (`[libc.so.6]`).

use std::path::Path;

/// One executable mapping of a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    /// Where in the file the mapping starts.
    pub offset: u64,
    /// The file mapped, as maps names it (`[vdso]` and the like for the kernel's own).
    pub path: String,
}

/// The executable mappings of a maps file's text.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut it = line.split_ascii_whitespace();
        let (Some(range), Some(perms), Some(offset)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if !perms.contains('x') {
            continue;
        }
        let (_dev, _inode) = (it.next(), it.next());
        let path = it.collect::<Vec<_>>().join(" ");
        let Some((a, b)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end), Ok(offset)) = (
            u64::from_str_radix(a, 16),
            u64::from_str_radix(b, 16),
            u64::from_str_radix(offset, 16),
        ) else {
            continue;
        };
        out.push(Mapping {
            start,
            end,
            offset,
            path,
        });
    }
    out.sort_by_key(|m| m.start);
    out
}

/// The mapping holding `ip`.
pub fn mapping_of(maps: &[Mapping], ip: u64) -> Option<&Mapping> {
    let i = maps.partition_point(|m| m.start <= ip);
    maps.get(i.checked_sub(1)?).filter(|m| ip < m.end)
}

/// A library's frame name: `[libc.so.6]`, `[vdso]`; `[unknown]` for an anonymous mapping.
pub fn library_frame(path: &str) -> String {
    let path = path.trim_end_matches(" (deleted)");
    if path.is_empty() {
        return super::folded::UNKNOWN.to_string();
    }
    if path.starts_with('[') {
        return path.to_string();
    }
    let base = Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string());
    format!("[{base}]")
}

/// A binary's functions, by the address they load at (its own, before any relocation).
#[derive(Debug, Default)]
pub struct Symbols {
    /// Loadable segments: (file offset, file size, address).
    segments: Vec<(u64, u64, u64)>,
    /// Functions: (address, size, mangled name), by address.
    funcs: Vec<(u64, u64, Box<str>)>,
}

impl Symbols {
    /// The functions of an ELF file's bytes (its symbol table, else its dynamic one).
    pub fn parse(bytes: &[u8]) -> Option<Symbols> {
        use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};
        let file = object::File::parse(bytes).ok()?;
        let segments = file
            .segments()
            .map(|s| {
                let (off, size) = s.file_range();
                (off, size, s.address())
            })
            .collect();
        let mut funcs: Vec<(u64, u64, Box<str>)> = Vec::new();
        for table in [file.symbols(), file.dynamic_symbols()] {
            for s in table.filter(|s| s.kind() == SymbolKind::Text && s.address() != 0) {
                if let Ok(name) = s.name() {
                    funcs.push((s.address(), s.size(), Box::from(name)));
                }
            }
            if !funcs.is_empty() {
                break;
            }
        }
        funcs.sort_by_key(|f| f.0);
        funcs.dedup_by_key(|f| f.0);
        Some(Symbols { segments, funcs })
    }

    /// The symbols of a process's binary (`/proc/PID/exe`).
    pub fn of_process(pid: u32) -> Option<Symbols> {
        let bytes = std::fs::read(format!("/proc/{pid}/exe")).ok()?;
        Symbols::parse(&bytes)
    }

    /// The mangled name of the function at file offset `off` of the binary.
    pub fn at_offset(&self, off: u64) -> Option<&str> {
        let (foff, _, addr) = self
            .segments
            .iter()
            .find(|(o, size, _)| *o <= off && off < o + size)?;
        let a = off - foff + addr;
        let i = self.funcs.partition_point(|f| f.0 <= a);
        let (start, size, name) = self.funcs.get(i.checked_sub(1)?)?;
        // A symbol without a size (hand-written assembly) reaches to the next one.
        (*size == 0 || a < start + size).then_some(&**name)
    }

    pub fn is_empty(&self) -> bool {
        self.funcs.is_empty()
    }
}

/// A symbol's name as a person reads it: Rust's and C++'s demangled, without Rust's hash.
pub fn demangle(name: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executable_mappings_are_read_and_found_by_address() {
        let maps = parse_maps(
            "55d0c0000000-55d0c0100000 r--p 00000000 fd:01 123 /usr/bin/fsbench\n\
             55d0c0100000-55d0c0900000 r-xp 00100000 fd:01 123 /usr/bin/fsbench\n\
             7f0000000000-7f0000100000 r-xp 00028000 fd:01 456 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
             7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n\
             7ffe00000000-7ffe00002000 r-xp 00000000 00:00 0\n\
             garbage line\n",
        );
        assert_eq!(maps.len(), 4);
        let m = mapping_of(&maps, 0x55d0c0100010).unwrap();
        assert_eq!((m.offset, m.path.as_str()), (0x100000, "/usr/bin/fsbench"));
        assert!(mapping_of(&maps, 0x55d0c0000010).is_none());
        assert!(mapping_of(&maps, 0x1000).is_none());
        let lib = mapping_of(&maps, 0x7f0000000100).unwrap();
        assert_eq!(library_frame(&lib.path), "[libc.so.6]");
        assert_eq!(library_frame("[vdso]"), "[vdso]");
        assert_eq!(library_frame(""), "[unknown]");
        assert_eq!(library_frame("/tmp/my lib.so (deleted)"), "[my lib.so]");
    }

    #[test]
    fn this_binary_names_its_own_functions_demangled() {
        let here = this_binary_names_its_own_functions_demangled as fn() as usize as u64;
        let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
        let m = mapping_of(&maps, here).expect("mapped");
        let syms = Symbols::of_process(std::process::id()).expect("an ELF file");
        let name = syms.at_offset(here - m.start + m.offset).expect("named");
        let name = demangle(name);
        assert!(
            name.ends_with("this_binary_names_its_own_functions_demangled"),
            "{name}"
        );
        assert!(name.starts_with("fsbench::profile::elf::tests::"), "{name}");
    }

    #[test]
    fn rust_names_are_demangled_without_their_hash() {
        assert_eq!(
            demangle("_ZN7fsbench2io5drive3run17h0123456789abcdefE"),
            "fsbench::io::drive::run"
        );
        assert_eq!(demangle("write"), "write");
    }
}
