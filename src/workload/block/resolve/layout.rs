//! The files a block workload lays out before it runs, each with the span to write: in the order
//! first met, and found by path in constant time (a job may have a million files: fio's nrfiles
//! and filename=a:b:... allow 2^20).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::plan::units::Span;

#[derive(Debug, Default)]
pub struct Layout {
    /// Each path with its span, in the order first added.
    spans: Vec<(PathBuf, Span)>,
    /// path -> its index in `spans`.
    at: HashMap<PathBuf, usize>,
}

impl Layout {
    /// The span of `path`, if it is laid out.
    pub fn get(&self, path: &Path) -> Option<&(PathBuf, Span)> {
        self.at.get(path).map(|&i| &self.spans[i])
    }

    pub fn contains(&self, path: &Path) -> bool {
        self.at.contains_key(path)
    }

    /// Adds `path` with `span` (a path already there is left as it is).
    pub fn add(&mut self, path: &Path, span: Span) {
        if self.contains(path) {
            return;
        }
        self.at.insert(path.to_path_buf(), self.spans.len());
        self.spans.push((path.to_path_buf(), span));
    }

    /// Widens the span of `path`, if it is laid out, to take in `more`.
    pub fn widen(&mut self, path: &Path, more: Span) {
        if let Some(&i) = self.at.get(path) {
            let s = &mut self.spans[i].1;
            s.start = s.start.min(more.start);
            s.end = s.end.max(more.end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_added_once_and_widened_in_place() {
        let mut l = Layout::default();
        l.add(Path::new("a"), Span::new(4096, 8192));
        l.add(Path::new("b"), Span::new(0, 10));
        l.add(Path::new("a"), Span::new(0, 1));
        l.widen(Path::new("a"), Span::new(0, 16384));
        l.widen(Path::new("c"), Span::new(0, 1));
        assert_eq!(
            l.get(Path::new("a")),
            Some(&(PathBuf::from("a"), Span::new(0, 16384)))
        );
        assert_eq!(
            l.get(Path::new("b")),
            Some(&(PathBuf::from("b"), Span::new(0, 10)))
        );
        assert!(l.get(Path::new("c")).is_none() && !l.contains(Path::new("c")));
    }
}
