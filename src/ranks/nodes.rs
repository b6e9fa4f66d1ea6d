//! Nodes: the ranks on one machine share its disks and its memory. MPI tells the machines apart
//! by the processor name each rank reports (its host name); ranks that report the same name are
//! one node. Nodes are numbered in the order of their first rank, so rank 0's node is node 0,
//! and a node's leader is its first rank: it provisions the node's own targets.

use serde::{Deserialize, Serialize};

use crate::frame::Rank;

/// Which node each rank of a run is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nodes {
    /// Per rank: its node.
    of_rank: Vec<usize>,
    /// Per node: its name (the processor name of its ranks).
    names: Vec<String>,
}

impl Nodes {
    /// The nodes of ranks that reported `hosts` (rank order).
    pub fn group(hosts: &[String]) -> Nodes {
        let mut names: Vec<String> = Vec::new();
        let of_rank = hosts
            .iter()
            .map(|h| match names.iter().position(|n| n == h) {
                Some(k) => k,
                None => {
                    names.push(h.clone());
                    names.len() - 1
                }
            })
            .collect();
        Nodes { of_rank, names }
    }

    /// One process on one node.
    pub fn one(host: &str) -> Nodes {
        Nodes::group(&[host.to_string()])
    }

    pub fn count(&self) -> usize {
        self.names.len()
    }

    /// The node `rank` is on.
    pub fn node_of(&self, rank: usize) -> usize {
        self.of_rank.get(rank).copied().unwrap_or(0)
    }

    pub fn name(&self, node: usize) -> &str {
        self.names.get(node).map(String::as_str).unwrap_or("")
    }

    /// The first rank of `rank`'s node: it provisions the node's targets.
    pub fn leader_of(&self, rank: usize) -> usize {
        let node = self.node_of(rank);
        self.of_rank.iter().position(|n| *n == node).unwrap_or(0)
    }

    /// `rank` among the ranks of its node: its place in their order, and how many they are.
    pub fn within(&self, rank: usize) -> Rank {
        let node = self.node_of(rank);
        let same = |r: &usize| self.of_rank[*r] == node;
        Rank {
            index: (0..rank.min(self.of_rank.len())).filter(same).count(),
            size: (0..self.of_rank.len()).filter(same).count().max(1),
        }
    }

    /// "node 2 (c3n7)", for messages.
    pub fn said(&self, node: usize) -> String {
        format!("node {node} ({})", self.name(node))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(h: &[&str]) -> Vec<String> {
        h.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ranks_with_one_processor_name_are_one_node_numbered_by_their_first_rank() {
        let n = Nodes::group(&hosts(&["b", "a", "b", "c", "a"]));
        assert_eq!(n.count(), 3);
        assert_eq!(
            (0..5).map(|r| n.node_of(r)).collect::<Vec<_>>(),
            [0, 1, 0, 2, 1]
        );
        assert_eq!((n.name(0), n.name(1), n.name(2)), ("b", "a", "c"));
        assert_eq!(
            (0..5).map(|r| n.leader_of(r)).collect::<Vec<_>>(),
            [0, 1, 0, 3, 1]
        );
        // Rank 4 is the second of node 1's two ranks; rank 3 is alone on node 2.
        assert_eq!(n.within(4), Rank { index: 1, size: 2 });
        assert_eq!(n.within(1), Rank { index: 0, size: 2 });
        assert_eq!(n.within(3), Rank { index: 0, size: 1 });
        assert_eq!(n.said(2), "node 2 (c)");
    }

    #[test]
    fn one_process_is_rank_0_of_node_0() {
        let n = Nodes::one("h");
        assert_eq!((n.count(), n.node_of(0), n.leader_of(0)), (1, 0, 0));
        assert_eq!(n.within(0), Rank::ONE);
    }
}
