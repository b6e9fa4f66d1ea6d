//! The files a block workload lays out before it runs, each with the span to write: in the order
//! first met, and found by path in constant time (a job may have a million files: fio's nrfiles
//! and filename=a:b:... allow 2^20).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Default)]
pub struct Layout {
    /// path -> [start, end), in the order first added.
    spans: Vec<(PathBuf, u64, u64)>,
    /// path -> its index in `spans`.
    at: HashMap<PathBuf, usize>,
}

impl Layout {
    /// The span of `path`, if it is laid out.
    pub fn get(&self, path: &Path) -> Option<&(PathBuf, u64, u64)> {
        self.at.get(path).map(|&i| &self.spans[i])
    }

    pub fn contains(&self, path: &Path) -> bool {
        self.at.contains_key(path)
    }

    /// Adds `path` with [start, end) (a path already there is left as it is).
    pub fn add(&mut self, path: &Path, start: u64, end: u64) {
        if self.contains(path) {
            return;
        }
        self.at.insert(path.to_path_buf(), self.spans.len());
        self.spans.push((path.to_path_buf(), start, end));
    }

    /// Widens the span of `path`, if it is laid out, to take in [start, end).
    pub fn widen(&mut self, path: &Path, start: u64, end: u64) {
        if let Some(&i) = self.at.get(path) {
            let s = &mut self.spans[i];
            s.1 = s.1.min(start);
            s.2 = s.2.max(end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_added_once_and_widened_in_place() {
        let mut l = Layout::default();
        l.add(Path::new("a"), 4096, 8192);
        l.add(Path::new("b"), 0, 10);
        l.add(Path::new("a"), 0, 1);
        l.widen(Path::new("a"), 0, 16384);
        l.widen(Path::new("c"), 0, 1);
        assert_eq!(l.get(Path::new("a")), Some(&(PathBuf::from("a"), 0, 16384)));
        assert_eq!(l.get(Path::new("b")), Some(&(PathBuf::from("b"), 0, 10)));
        assert!(l.get(Path::new("c")).is_none() && !l.contains(Path::new("c")));
    }
}
