//! Specs with alternatives in braces: `zfs:recordsize={4k,16k,128k}` is three specs,
//! `btrfs:{nodatacow,compress=zstd},space_cache=v2` two, and several braces in one spec give
//! their product. Braces do not nest; a brace inside quotes (`mkfs='-O {x}'`) is text.

use super::PlanError;

/// One brace group: where it starts and ends in the spec, and its alternatives.
struct Group {
    start: usize,
    end: usize,
    alternatives: Vec<String>,
}

fn groups(spec: &str) -> Result<Vec<Group>, PlanError> {
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let mut open: Option<usize> = None;
    for (i, c) in spec.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '{') if open.is_some() => {
                return Err(format!(
                    "'{spec}': braces do not nest: write the alternatives of one option per brace, e.g. zfs:recordsize={{4k,128k}},logbias={{latency,throughput}}"
                )
                .into());
            }
            (None, '{') => open = Some(i),
            (None, '}') => {
                let Some(start) = open.take() else {
                    return Err(format!("'{spec}': a '}}' without its '{{'").into());
                };
                let inner = &spec[start + 1..i];
                let alternatives: Vec<String> =
                    inner.split(',').map(|a| a.trim().to_string()).collect();
                if inner.trim().is_empty() || alternatives.iter().any(String::is_empty) {
                    return Err(format!(
                        "'{spec}': an empty alternative in {{{inner}}}: give each one, e.g. {{4k,128k}}"
                    )
                    .into());
                }
                out.push(Group {
                    start,
                    end: i,
                    alternatives,
                });
            }
            _ => {}
        }
    }
    if open.is_some() {
        return Err(format!(
            "'{spec}': a '{{' without its '}}': close it, e.g. zfs:recordsize={{4k,128k}}"
        )
        .into());
    }
    if quote.is_some() {
        return Err(format!("'{spec}': an unbalanced quote").into());
    }
    Ok(out)
}

/// Every spec a spec with braces stands for, in order (the first brace varies slowest); a spec
/// without braces is itself.
pub fn expand(spec: &str) -> Result<Vec<String>, PlanError> {
    let gs = groups(spec)?;
    let mut out = vec![String::new()];
    let mut at = 0;
    for g in &gs {
        let lit = &spec[at..g.start];
        out = out
            .into_iter()
            .flat_map(|prefix| {
                g.alternatives
                    .iter()
                    .map(move |a| format!("{prefix}{lit}{a}"))
            })
            .collect();
        at = g.end + 1;
    }
    let tail = &spec[at..];
    Ok(out.into_iter().map(|s| format!("{s}{tail}")).collect())
}

/// How many specs `expand` would give, counted without making them (saturating: six braces of
/// a hundred alternatives are 10^12, which no memory holds).
pub fn count(spec: &str) -> Result<u64, PlanError> {
    Ok(groups(spec)?
        .iter()
        .fold(1u64, |n, g| n.saturating_mul(g.alternatives.len() as u64)))
}

/// Whether a spec holds alternatives.
pub fn has_braces(spec: &str) -> bool {
    groups(spec).is_ok_and(|g| !g.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Vec<String> {
        expand(s).unwrap()
    }

    #[test]
    fn alternatives_expand_and_several_braces_give_their_product() {
        assert_eq!(ok("ext4"), ["ext4"]);
        assert_eq!(
            ok("zfs:recordsize={4k,16k,128k}"),
            [
                "zfs:recordsize=4k",
                "zfs:recordsize=16k",
                "zfs:recordsize=128k"
            ]
        );
        assert_eq!(
            ok("btrfs:{nodatacow,compress=zstd},space_cache=v2"),
            [
                "btrfs:nodatacow,space_cache=v2",
                "btrfs:compress=zstd,space_cache=v2"
            ]
        );
        assert_eq!(
            ok("zfs:recordsize={4k,128k},logbias={latency,throughput}"),
            [
                "zfs:recordsize=4k,logbias=latency",
                "zfs:recordsize=4k,logbias=throughput",
                "zfs:recordsize=128k,logbias=latency",
                "zfs:recordsize=128k,logbias=throughput"
            ]
        );
        assert_eq!(
            ok("zfs:recordsize={ 4k , 8k }"),
            ["zfs:recordsize=4k", "zfs:recordsize=8k"]
        );
    }

    #[test]
    fn the_count_is_the_product_without_expanding() {
        assert_eq!(count("ext4").unwrap(), 1);
        assert_eq!(
            count("zfs:recordsize={4k,128k},logbias={a,b,c}").unwrap(),
            6
        );
        let hundred = (1..=100)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let six = vec![format!("k={{{hundred}}}"); 6].join(",");
        assert_eq!(count(&format!("ext4:{six}")).unwrap(), 1_000_000_000_000);
        let many = vec![format!("k={{{hundred}}}"); 12].join(",");
        assert_eq!(count(&format!("ext4:{many}")).unwrap(), u64::MAX);
        assert!(count("ext4:{a").is_err());
    }

    #[test]
    fn quotes_keep_braces_as_text() {
        assert_eq!(ok("ext4:mkfs='-E {x}'"), ["ext4:mkfs='-E {x}'"]);
        assert!(!has_braces("ext4:mkfs='-E {x}'"));
        assert_eq!(
            ok("ext4:mkfs='-m 0',data={ordered,writeback}"),
            [
                "ext4:mkfs='-m 0',data=ordered",
                "ext4:mkfs='-m 0',data=writeback"
            ]
        );
    }

    #[test]
    fn bad_braces_are_refused_with_the_fix() {
        for (s, word) in [
            ("zfs:recordsize={4k,{8k,16k}}", "do not nest"),
            ("zfs:recordsize={4k,16k", "without its '}'"),
            ("zfs:recordsize=4k}", "without its '{'"),
            ("zfs:recordsize={}", "empty alternative"),
            ("zfs:recordsize={4k,}", "empty alternative"),
        ] {
            let e = expand(s).unwrap_err().to_string();
            assert!(e.contains(word), "{s}: {e}");
        }
    }
}
