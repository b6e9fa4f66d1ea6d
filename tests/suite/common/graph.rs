//! Import graphs of the tests that keep the code's structure (tests/suite/architecture.rs,
//! tests/suite/report_imports.rs): a cycle through a graph of names.

use std::collections::{BTreeMap, BTreeSet};

/// A cycle through the graph, if there is one (depth-first search with a path stack).
pub fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            match state.get(d.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = path.iter().position(|p| p == d).unwrap();
                    let mut c = path[at..].to_vec();
                    c.push(d.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(d, g, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}
