//! Text laid out for a terminal of a given width: long lines broken at spaces, and the rows a
//! text takes there.

/// `text` with each line longer than `columns` broken at spaces (a word longer than a line is
/// cut), its continuation lines starting with `indent`.
pub fn wrap(text: &str, columns: usize, indent: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let mut width = 0;
        for (i, word) in body.split(' ').enumerate() {
            let mut word: Vec<char> = word.chars().collect();
            if i > 0 {
                if width + 1 + word.len() <= columns {
                    out.push(' ');
                    width += 1;
                } else {
                    out.push('\n');
                    out.push_str(indent);
                    width = indent.chars().count();
                }
            }
            while width + word.len() > columns && word.len() > columns / 2 {
                let fits = columns.saturating_sub(width).max(1);
                out.extend(&word[..fits]);
                out.push('\n');
                out.push_str(indent);
                width = indent.chars().count();
                word.drain(..fits);
            }
            out.extend(&word);
            width += word.len();
        }
        out.push_str(end);
    }
    out
}

/// The rows `text` takes on a terminal `columns` wide (a longer line takes more than one).
pub fn rows(text: &str, columns: usize) -> usize {
    text.lines()
        .map(|l| l.chars().count().div_ceil(columns.max(1)).max(1))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_at_spaces_and_count_their_rows() {
        let note = "each phase's limiter, decided from what its workers did";
        let w = wrap(note, 20, "  ");
        assert_eq!(
            w,
            "each phase's\n  limiter, decided\n  from what its\n  workers did"
        );
        assert!(w.lines().all(|l| l.chars().count() <= 20), "{w}");
        // A word longer than a line is cut; short lines and line ends stay as they are.
        let path = format!("results: /{}\nok\n", "d".repeat(50));
        let w = wrap(&path, 20, "");
        assert!(w.lines().all(|l| l.chars().count() <= 20), "{w}");
        assert!(w.ends_with("\nok\n"), "{w:?}");
        assert_eq!(
            w.replace('\n', ""),
            path.replace('\n', "").replacen(' ', "", 1)
        );
        assert_eq!(rows("a\n\nbb\n", 1), 4);
        assert_eq!(rows(&"x".repeat(161), 80), 3);
    }
}
