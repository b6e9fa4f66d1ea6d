//! mdtest's names: an iteration's test directory (`test-dir.J-0`), a tree's directories
//! (`mdtest_tree.R.0` the root, `mdtest_tree.R.K` directory K: the children of K are numbered
//! b*K+1 .. b*K+b, as a heap), and its items (`file.mdtest.R.N`, `dir.mdtest.R.N`, item N in
//! directory N / items-per-directory), in the orders mdtest visits them.

use std::path::{Path, PathBuf};

use crate::plan::hpc::mdtest::MdPlan;

/// A tree of the test: the rank that owns it (`-u`), or the one every rank works in.
#[derive(Debug, Clone, Copy)]
pub enum Owner {
    Rank(usize),
    Shared,
}

impl Owner {
    /// The tree's directories' name before their number.
    pub(super) fn base(self) -> String {
        match self {
            Owner::Rank(r) => format!("mdtest_tree.{r}"),
            Owner::Shared => "mdtest_tree".into(),
        }
    }
}

/// The test's shape and where it lives.
pub struct Tree<'a> {
    pub plan: &'a MdPlan,
    /// The test's directory (`-d`, in the target).
    pub root: &'a Path,
}

impl Tree<'_> {
    /// Iteration `j`'s directory.
    pub fn testdir(&self, j: u32) -> PathBuf {
        self.root.join(format!("test-dir.{j}-0"))
    }

    /// Directory `k` of `owner`'s tree in iteration `j`.
    pub fn dir(&self, j: u32, owner: Owner, k: u64) -> PathBuf {
        let base = owner.base();
        let mut p = self
            .testdir(j)
            .join(format!("{base}.0"))
            .display()
            .to_string();
        self.push_below_root(&mut p, &base, k, &mut Vec::new());
        PathBuf::from(p)
    }

    /// Appends directory `k`'s part below its tree's root (`/base.a/.../base.k`, nothing for
    /// the root) to `out`: its ancestors walked up from `k` (into `chain`, scratch), as mdtest
    /// walks them.
    pub fn push_below_root(&self, out: &mut String, base: &str, k: u64, chain: &mut Vec<u64>) {
        use std::fmt::Write;
        chain.clear();
        let b = self.plan.branch.max(1);
        let mut d = k;
        while d > 0 {
            chain.push(d);
            d = (d - 1) / b;
        }
        for d in chain.iter().rev() {
            let _ = write!(out, "/{base}.{d}");
        }
    }

    /// The tree's directories in the order mdtest makes them (each before its children);
    /// removed in the reverse.
    pub fn dirs(&self) -> Vec<u64> {
        let mut out = Vec::new();
        self.visit(0, 0, &mut |k, _| out.push(k));
        out
    }

    /// Directory `k` at `depth`, then its children, depth first.
    fn visit(&self, k: u64, depth: u32, f: &mut dyn FnMut(u64, u32)) {
        f(k, depth);
        if depth < self.plan.depth {
            let b = self.plan.branch.max(1);
            for c in k * b + 1..=k * b + b {
                self.visit(c, depth + 1, f);
            }
        }
    }

    /// The items in the order mdtest creates and removes them: each directory's (that holds
    /// items) in the order of `dirs`.
    pub fn made(&self) -> Vec<u64> {
        let p = self.plan;
        let mut out = Vec::new();
        self.visit(0, 0, &mut |k, depth| {
            if !p.leaf_only || depth == p.depth {
                out.extend(k * p.per_dir..(k + 1) * p.per_dir);
            }
        });
        out
    }

    /// The items in the order mdtest stats and reads them: by number (the first `count`).
    pub fn numbered(&self, count: u64) -> Vec<u64> {
        let first = self.plan.first_item_dir() * self.plan.per_dir;
        (first..first + count).collect()
    }

    /// Item `n`'s path: `kind` is "file" or "dir", `name` the rank in its name.
    #[cfg(test)]
    pub fn item(&self, j: u32, owner: Owner, kind: &str, name: usize, n: u64) -> PathBuf {
        let k = n / self.plan.per_dir.max(1);
        let mut s = String::new();
        item_name(&mut s, kind, name, n);
        self.dir(j, owner, k).join(s)
    }
}

/// Item `n`'s name in its directory, appended to `out`.
pub fn item_name(out: &mut String, kind: &str, name: usize, n: u64) {
    use std::fmt::Write;
    let _ = write!(out, "{kind}.mdtest.{name}.{n}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_orders_are_mdtests() {
        let p = MdPlan::parse("-n 26 -z 2 -b 2 -u").unwrap();
        assert_eq!((p.tree_dirs, p.per_dir), (7, 3));
        let t = Tree {
            plan: &p,
            root: Path::new("/t"),
        };
        assert_eq!(t.dirs(), [0, 1, 3, 4, 2, 5, 6]);
        assert_eq!(
            t.dir(0, Owner::Rank(3), 4),
            Path::new("/t/test-dir.0-0/mdtest_tree.3.0/mdtest_tree.3.1/mdtest_tree.3.4")
        );
        assert_eq!(
            t.item(1, Owner::Shared, "file", 2, 7),
            Path::new("/t/test-dir.1-0/mdtest_tree.0/mdtest_tree.2/file.mdtest.2.7")
        );
        let made = t.made();
        assert_eq!(&made[..6], [0, 1, 2, 3, 4, 5]);
        assert_eq!(&made[6..9], [9, 10, 11], "directory 3 before 2");
        assert_eq!(made.len(), 21);
        // Leaves only: directories 3..6, items numbered from directory 3's.
        let p = MdPlan::parse("-n 12 -z 2 -b 2 -L").unwrap();
        let t = Tree {
            plan: &p,
            root: Path::new("/t"),
        };
        assert_eq!(t.made(), [9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
        assert_eq!(t.numbered(3), [9, 10, 11]);
    }
}
