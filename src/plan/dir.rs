//! An I/O's direction (fio's ddir: read, write, trim) and a value per direction. Pure data: the
//! plan, the I/O loop, the engines and the system layer all name directions this way.

use std::ops::{Index, IndexMut};

/// Which way an I/O goes. The discriminants are fio's ddir numbers (its logs' direction column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl Dir {
    pub const ALL: [Dir; 3] = [Dir::Read, Dir::Write, Dir::Trim];

    /// fio's ddir number (0, 1, 2).
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The word fio's reports use for it: read, write, trim.
    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }

    /// Does an I/O this way change the file?
    pub fn changes(self) -> bool {
        self != Dir::Read
    }
}

/// One value per direction, indexed by `Dir`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerDir<T>([T; 3]);

impl<T> PerDir<T> {
    /// Each direction's value from `f`.
    pub fn new(mut f: impl FnMut(Dir) -> T) -> PerDir<T> {
        PerDir([f(Dir::Read), f(Dir::Write), f(Dir::Trim)])
    }

    /// Reads and writes as given (fio's `R,W` values), trims as writes.
    pub fn rw(read: T, write: T) -> PerDir<T>
    where
        T: Clone,
    {
        PerDir([read, write.clone(), write])
    }

    pub fn map<U>(&self, mut f: impl FnMut(Dir, &T) -> U) -> PerDir<U> {
        PerDir::new(|d| f(d, &self[d]))
    }

    /// (direction, value), reads first.
    pub fn iter(&self) -> impl Iterator<Item = (Dir, &T)> {
        Dir::ALL.into_iter().zip(self.0.iter())
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Dir, &mut T)> {
        Dir::ALL.into_iter().zip(self.0.iter_mut())
    }
}

impl<T> Index<Dir> for PerDir<T> {
    type Output = T;

    #[inline]
    fn index(&self, d: Dir) -> &T {
        &self.0[d as usize]
    }
}

impl<T> IndexMut<Dir> for PerDir<T> {
    #[inline]
    fn index_mut(&mut self, d: Dir) -> &mut T {
        &mut self.0[d as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_per_direction_in_fios_ddir_order() {
        let mut p = PerDir::rw(1, 2);
        assert_eq!((p[Dir::Read], p[Dir::Write], p[Dir::Trim]), (1, 2, 2));
        p[Dir::Trim] = 7;
        let names: Vec<String> = p.iter().map(|(d, v)| format!("{}{v}", d.name())).collect();
        assert_eq!(names, ["read1", "write2", "trim7"]);
        assert_eq!(Dir::Trim.index(), 2);
        assert!(Dir::Trim.changes() && !Dir::Read.changes());
    }
}
