//! A record's notes as a kind and a text. A note is stored as it always was, one string
//! `"kind: text"` (`"page_cache: tmpfs lives in the page cache; reads measure memory"`), or the
//! text alone for a plain remark; writers make them with `make`, readers ask `kind`/`find`, so a
//! renamed kind is one edit here and no reader matches a prefix by hand.

/// What a note says about its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Reads may have come from the page cache, not the device.
    PageCache,
    /// The filesystem ran out of space or inodes before the work was done.
    Exhausted,
    /// The phase was stopped before its end (Ctrl-C, SIGTERM, a rank lost).
    Interrupted,
    /// A rate or a count asked for was not reached (snapshots per second, a phase cut short).
    Short,
    /// A cell measured in too short a time for a stable figure (iozone).
    TooFast,
    /// Fragmentation could not be measured here.
    Fragmentation,
    /// Whether and when a job reached its steady state (fio's steadystate).
    Steady,
    /// Other processes or the hypervisor took a documented share of the machine during the
    /// phase (metrics::limiter::interference).
    Interference,
    /// A profile asked for (`--profile`) that the host did not allow, wholly or in part.
    Profile,
    /// More ranks than CPUs on a node, unbound: the scheduler's placement moves short phases'
    /// rates from run to run (frame::Placement).
    Placement,
    /// Anything else: a remark with no kind.
    Plain,
}

/// Every kind with a prefix, for `kind`.
const KINDS: &[Kind] = &[
    Kind::PageCache,
    Kind::Exhausted,
    Kind::Interrupted,
    Kind::Short,
    Kind::TooFast,
    Kind::Fragmentation,
    Kind::Steady,
    Kind::Interference,
    Kind::Profile,
    Kind::Placement,
];

impl Kind {
    /// The word before the colon.
    pub const fn prefix(self) -> &'static str {
        match self {
            Kind::PageCache => "page_cache",
            Kind::Exhausted => "exhausted",
            Kind::Interrupted => "interrupted",
            Kind::Short => "short",
            Kind::TooFast => "too_fast",
            Kind::Fragmentation => "fragmentation",
            Kind::Steady => "steady",
            Kind::Interference => "interference",
            Kind::Profile => "profile",
            Kind::Placement => "placement",
            Kind::Plain => "",
        }
    }

    /// The record did less work than asked: its figures are not comparable with a record that
    /// did all of it.
    pub const fn less_work(self) -> bool {
        matches!(self, Kind::Exhausted | Kind::Interrupted | Kind::Short)
    }
}

/// A note of a kind: `"kind: text"`.
pub fn make(kind: Kind, text: impl std::fmt::Display) -> String {
    match kind {
        Kind::Plain => text.to_string(),
        k => format!("{}: {text}", k.prefix()),
    }
}

/// The kind of a stored note.
pub fn kind(note: &str) -> Kind {
    KINDS
        .iter()
        .copied()
        .find(|k| {
            note.strip_prefix(k.prefix())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
        })
        .unwrap_or(Kind::Plain)
}

/// The text of a note without its kind.
pub fn text(note: &str) -> &str {
    match kind(note) {
        Kind::Plain => note,
        k => note[k.prefix().len()..]
            .trim_start_matches(':')
            .trim_start(),
    }
}

/// The first note of a kind among `notes`, as text.
pub fn find(notes: &[String], k: Kind) -> Option<&str> {
    notes
        .iter()
        .find(|n| kind(n) == k)
        .map(|n| text(n.as_str()))
}

/// Whether `notes` hold one of a kind.
pub fn has(notes: &[String], k: Kind) -> bool {
    notes.iter().any(|n| kind(n) == k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_stored_as_it_always_was_and_read_back_by_kind() {
        let n = make(
            Kind::PageCache,
            "tmpfs lives in the page cache; reads measure memory",
        );
        assert_eq!(
            n,
            "page_cache: tmpfs lives in the page cache; reads measure memory"
        );
        assert_eq!(kind(&n), Kind::PageCache);
        assert_eq!(
            text(&n),
            "tmpfs lives in the page cache; reads measure memory"
        );
        assert_eq!(
            make(Kind::Plain, "data: incompressible"),
            "data: incompressible"
        );
        assert_eq!(kind("data: incompressible"), Kind::Plain);
        assert_eq!(kind("page_cachet: x"), Kind::Plain);
        assert_eq!(kind("exhausted: ext4 ran out of inodes"), Kind::Exhausted);
        let notes = vec!["x".to_string(), make(Kind::Interrupted, "stopped early")];
        assert_eq!(find(&notes, Kind::Interrupted), Some("stopped early"));
        assert!(has(&notes, Kind::Interrupted) && !has(&notes, Kind::PageCache));
        assert!(Kind::Exhausted.less_work() && !Kind::PageCache.less_work());
    }
}
