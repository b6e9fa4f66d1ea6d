//! Folded stacks, the format flamegraph.pl, inferno and speedscope read: one line per distinct
//! call chain, its frames from the root (the process) to the leaf joined by `;`, a space and
//! its count (samples on the CPU, or microseconds off it). Kernel frames end in `_[k]`, the
//! annotation stackcollapse-perf.pl and inferno's palettes use. Pure: text in, text out.

use std::collections::BTreeMap;

/// The suffix of a kernel frame.
pub const KERNEL: &str = "_[k]";
/// A frame nothing names.
pub const UNKNOWN: &str = "[unknown]";
/// The root frame of fsbench's own threads (the filesystem's daemons' roots are their names).
pub const FSBENCH: &str = "fsbench";

/// Which profile: where the threads ran, or where they blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    OnCpu,
    OffCpu,
}

impl Kind {
    pub const ALL: [Kind; 2] = [Kind::OnCpu, Kind::OffCpu];

    /// Its word in file names and headings.
    pub fn name(self) -> &'static str {
        match self {
            Kind::OnCpu => "on-cpu",
            Kind::OffCpu => "off-cpu",
        }
    }

    /// What a line's count is.
    pub fn unit(self) -> &'static str {
        match self {
            Kind::OnCpu => "samples",
            Kind::OffCpu => "us",
        }
    }
}

/// Distinct stacks and their counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Folded {
    stacks: BTreeMap<String, u64>,
}

/// A frame as a folded line may hold it: no `;` (Rust's `[u8; 16]` becomes `[u8, 16]`), no line
/// break or tab, never empty.
pub fn clean(frame: &str) -> String {
    let s: String = frame
        .trim()
        .chars()
        .map(|c| match c {
            ';' => ',',
            '\n' | '\r' | '\t' => ' ',
            c => c,
        })
        .collect();
    if s.is_empty() {
        UNKNOWN.to_string()
    } else {
        s
    }
}

impl Folded {
    /// Adds `n` to the stack of these frames (root first); frames are cleaned.
    pub fn add<S: AsRef<str>>(&mut self, frames: &[S], n: u64) {
        if frames.is_empty() || n == 0 {
            return;
        }
        let line: Vec<String> = frames.iter().map(|f| clean(f.as_ref())).collect();
        *self.stacks.entry(line.join(";")).or_insert(0) += n;
    }

    /// Adds every stack of `other`.
    pub fn merge(&mut self, other: &Folded) {
        for (k, v) in &other.stacks {
            *self.stacks.entry(k.clone()).or_insert(0) += v;
        }
    }

    pub fn total(&self) -> u64 {
        self.stacks.values().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    pub fn len(&self) -> usize {
        self.stacks.len()
    }

    /// Each stack and its count, in the order of the stacks' text.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.stacks.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// The file's text: one `frames count` line per stack.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.stacks {
            s.push_str(k);
            s.push(' ');
            s.push_str(&v.to_string());
            s.push('\n');
        }
        s
    }

    /// A folded file's stacks, and how many of its lines were not `frames count` (they are left
    /// out and never repeated: the caller says how many).
    pub fn parse(text: &str) -> (Folded, usize) {
        let mut f = Folded::default();
        let mut bad = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match line.rsplit_once(' ') {
                Some((stack, n)) if !stack.trim().is_empty() => match n.trim().parse::<u64>() {
                    Ok(n) => *f.stacks.entry(stack.trim().to_string()).or_insert(0) += n,
                    Err(_) => bad += 1,
                },
                _ => bad += 1,
            }
        }
        (f, bad)
    }
}

/// A file name's part from a label or a test name: letters, digits and `._,=+-` kept, anything
/// else (`:` `/` spaces) an underscore; never empty, never hidden (no leading dot), at most 80
/// bytes.
pub fn name_part(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._,=+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    if out.starts_with('.') || out.is_empty() {
        out.insert(0, '_');
    }
    out
}

/// Where a record's profile goes in its study: `profiles/TARGET.REPEAT.TEST.KIND.folded` (the
/// repeat counted from 1, as the report says it).
pub fn file_name(target: &str, repeat: u32, test: &str, kind: Kind) -> String {
    format!(
        "{}.{}.{}.{}.folded",
        name_part(target),
        repeat + 1,
        name_part(test),
        kind.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_fold_to_lines_and_read_back() {
        let mut f = Folded::default();
        f.add(&["fsbench", "main", "write_k_[k]"], 3);
        f.add(&["fsbench", "main", "write_k_[k]"], 2);
        f.add(&["fsbench", "<[u8; 4] as Debug>::fmt"], 1);
        f.add(&["fsbench", ""], 1);
        f.add::<&str>(&[], 9);
        assert_eq!(
            f.text(),
            "fsbench;<[u8, 4] as Debug>::fmt 1\nfsbench;[unknown] 1\nfsbench;main;write_k_[k] 5\n"
        );
        assert_eq!(f.total(), 7);
        let (back, bad) = Folded::parse(&f.text());
        assert_eq!((back, bad), (f.clone(), 0));
        let mut twice = f.clone();
        twice.merge(&f);
        assert_eq!(twice.total(), 14);
    }

    #[test]
    fn lines_that_are_not_folded_stacks_are_counted_not_kept() {
        let (f, bad) = Folded::parse("a;b 2\nsecret words here\na;b x\n 4\n\na;c 1\n");
        assert_eq!(bad, 3);
        assert_eq!(f.text(), "a;b 2\na;c 1\n");
    }

    #[test]
    fn file_names_are_sanitised_and_count_repeats_from_one() {
        assert_eq!(
            file_name("zfs:recordsize=4k", 0, "randwrite", Kind::OnCpu),
            "zfs_recordsize=4k.1.randwrite.on-cpu.folded"
        );
        assert_eq!(
            file_name("../../etc/x y", 2, "SEQ1M_Q8T1_read", Kind::OffCpu),
            "_.._.._etc_x_y.3.SEQ1M_Q8T1_read.off-cpu.folded"
        );
        assert_eq!(name_part(""), "_");
        assert_eq!(name_part(".hidden"), "_.hidden");
        assert_eq!(name_part(&"x".repeat(200)).len(), 80);
    }
}
