//! A file's physical layout from its extents: how many there are, how many physically separate
//! runs they form, and the layout score of Conway et al. (FAST'17, "File Systems Fated for
//! Senescence?"): the share of a file's blocks that sit physically right after the block before
//! them in logical order. 1.0 is one contiguous run; a file written backwards scores 0.

use crate::sys::fiemap::{Extent, FIEMAP_EXTENT_ENCODED};

/// The block the score counts in (the page size of every filesystem fsbench makes).
pub const BLOCK: u64 = 4096;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    /// Extents as the filesystem reports them (ext4 caps one at 128 MiB, btrfs a compressed one
    /// at 128 KiB: the count overstates fragmentation there).
    pub extents: u64,
    /// Physically contiguous runs: neighbouring extents that continue on disk count once.
    pub fragments: u64,
    /// Share of blocks physically next to their logical predecessor, 0..1.
    pub score: f64,
    /// Bytes mapped.
    pub bytes: u64,
    /// Extents stored encoded (compressed): their physical length differs from the logical.
    pub encoded: u64,
}

/// The layout of a file from its extents (in logical order, as FIEMAP gives them).
pub fn of(extents: &[Extent]) -> Layout {
    let mut blocks = 0u64;
    let mut adjacent = 0u64;
    let mut fragments = 0u64;
    let mut bytes = 0u64;
    let mut prev: Option<&Extent> = None;
    for e in extents {
        let n = e.length.div_ceil(BLOCK);
        blocks += n;
        bytes += e.length;
        adjacent += n.saturating_sub(1);
        let continues = prev.is_some_and(|p| {
            p.logical + p.length == e.logical && p.physical + p.length == e.physical
        });
        if continues {
            adjacent += 1;
        } else {
            fragments += 1;
        }
        prev = Some(e);
    }
    Layout {
        extents: extents.len() as u64,
        fragments,
        score: if blocks <= 1 {
            1.0
        } else {
            adjacent as f64 / (blocks - 1) as f64
        },
        bytes,
        encoded: extents
            .iter()
            .filter(|e| e.flags & FIEMAP_EXTENT_ENCODED != 0)
            .count() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(logical: u64, physical: u64, length: u64) -> Extent {
        Extent {
            logical,
            physical,
            length,
            flags: 0,
        }
    }

    #[test]
    fn one_run_scores_one_and_backwards_scores_zero() {
        let one = of(&[ext(0, 1 << 20, 64 * BLOCK)]);
        assert_eq!((one.extents, one.fragments, one.score), (1, 1, 1.0));
        // Two extents that continue on disk (ext4's 128 MiB cap): two extents, one fragment.
        let split = of(&[ext(0, 0, 8 * BLOCK), ext(8 * BLOCK, 8 * BLOCK, 8 * BLOCK)]);
        assert_eq!((split.extents, split.fragments, split.score), (2, 1, 1.0));
        // Eight blocks written last to first: every block lies before its predecessor.
        let back: Vec<Extent> = (0..8)
            .map(|i| ext(i * BLOCK, (7 - i) * BLOCK, BLOCK))
            .collect();
        let b = of(&back);
        assert_eq!((b.extents, b.fragments, b.score), (8, 8, 0.0));
    }

    #[test]
    fn a_gap_in_the_middle_costs_one_block() {
        // 4 blocks, then 4 blocks elsewhere: 6 of 7 neighbours adjacent.
        let l = of(&[ext(0, 0, 4 * BLOCK), ext(4 * BLOCK, 100 * BLOCK, 4 * BLOCK)]);
        assert_eq!(l.fragments, 2);
        assert!((l.score - 6.0 / 7.0).abs() < 1e-12);
        assert_eq!(of(&[]).score, 1.0);
    }
}
