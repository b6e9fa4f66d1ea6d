//! fio's data patterns (verify_pattern, buffer_pattern), read as fio's documentation describes
//! them: pieces one after another, each a `"quoted string"` (its bytes), a hex number `0x...` (its digits as bytes in the order written; an odd count's first digit is a
//! byte of its own: `0xaaa` is 0a aa) or a decimal number from -2^31 to 2^31-1 (its bytes,
//! least significant first, as few as it needs: 66 is 42, -1024 is 00 fc ff ff, 0 is 00).
//! `"abcd"-120xdeadface` is "abcd", then -12, then 0xdeadface. A `'file'` piece is the file's
//! contents, read when the job runs (the caller's reader); fio's `%o` (each block's offset) is
//! refused.

use crate::plan::PlanError;

type R<T> = Result<T, PlanError>;

/// fio's limit on a pattern's length.
const MAX_PATTERN: usize = 128 << 20;

/// Reads a pattern file's contents (the caller's: nothing here reads files).
pub type ReadFile<'a> = &'a dyn Fn(&str) -> std::io::Result<Vec<u8>>;

/// The bytes of a pattern; `key` names the option in errors. A `'file'` piece is refused here:
/// `parse_pattern_with` reads it.
pub fn parse_pattern(key: &str, v: &str) -> R<Vec<u8>> {
    parse_pattern_with(key, v, None)
}

/// Whether the pattern holds a `'file'` piece (outside a quoted string).
pub fn has_file(v: &str) -> bool {
    let mut quoted = false;
    for c in v.trim().chars() {
        match c {
            '"' => quoted = !quoted,
            '\'' if !quoted => return true,
            _ => {}
        }
    }
    false
}

/// The bytes of a pattern, its `'file'` pieces read with `read` (relative to the current
/// directory, as fio reads them).
pub fn parse_pattern_with(key: &str, v: &str, read: Option<ReadFile>) -> R<Vec<u8>> {
    let v = v.trim();
    let bad = |why: &str| PlanError(format!("{key}={v}: {why}"));
    if v.is_empty() {
        return Err(bad("the pattern is empty"));
    }
    let mut out = Vec::new();
    let mut rest = v;
    while !rest.is_empty() {
        let used = match rest.as_bytes()[0] {
            b'"' => {
                let end = rest[1..]
                    .find('"')
                    .ok_or_else(|| bad("a \"quoted string\" has no closing quote"))?;
                out.extend_from_slice(&rest.as_bytes()[1..1 + end]);
                end + 2
            }
            b'\'' => {
                let end = rest[1..]
                    .find('\'')
                    .ok_or_else(|| bad("a 'file name' has no closing quote"))?;
                let name = &rest[1..1 + end];
                let read = read.ok_or_else(|| bad("a pattern file is read when the job runs"))?;
                let data = read(name).map_err(|e| {
                    bad(&format!("cannot read the pattern file '{name}' (from the current directory, as fio reads it): {e}"))
                })?;
                if data.is_empty() {
                    return Err(bad(&format!("the pattern file '{name}' is empty")));
                }
                out.extend_from_slice(&data);
                end + 2
            }
            b'%' => return Err(bad("fio's %o (each block's offset in the pattern) is not supported by fsbench; give the bytes only")),
            _ => number(rest, &mut out).ok_or_else(|| {
                bad("expected pieces such as 0xdeadbeef, 255, -1, \"a string\" or 'a file'")
            })?,
        };
        rest = &rest[used..];
        if out.len() > MAX_PATTERN {
            return Err(bad("the pattern is longer than fio allows (128 MiB)"));
        }
    }
    if out.is_empty() {
        return Err(bad("the pattern is empty"));
    }
    Ok(out)
}

/// A number at the start of `s`: its bytes appended to `out`, the characters it took.
fn number(s: &str, out: &mut Vec<u8>) -> Option<usize> {
    let b = s.as_bytes();
    let hex_digits = |from: usize| {
        b[from..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit())
            .count()
    };
    if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' && hex_digits(2) > 0 {
        let mut n = hex_digits(2);
        // 0xff0x14: the 0 before the next x starts the next number.
        if b.get(2 + n).is_some_and(|c| (c | 0x20) == b'x') {
            n -= 1;
        }
        let digits = &s[2..2 + n];
        let first = n % 2;
        if first == 1 {
            out.push(u8::from_str_radix(&digits[..1], 16).ok()?);
        }
        for i in (first..n).step_by(2) {
            out.push(u8::from_str_radix(&digits[i..i + 2], 16).ok()?);
        }
        return Some(2 + n);
    }
    // A decimal runs up to the next 0x (-120xff is -12 then 0xff).
    let lim = s.to_ascii_lowercase().find("0x").unwrap_or(s.len());
    let mut end = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    end += b[end..lim]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let n: i64 = s[..end].parse().ok()?;
    let n = i32::try_from(n).ok()?;
    if n == 0 {
        out.push(0);
    } else {
        let mut u = n as u32;
        while u != 0 {
            out.push(u as u8);
            u >>= 8;
        }
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &str) -> Vec<u8> {
        parse_pattern("verify_pattern", v).unwrap_or_else(|e| panic!("{v}: {e}"))
    }

    #[test]
    fn pieces_read_as_fio_documents_them() {
        // fio's own examples (lib/pattern.c).
        assert_eq!(p("\"abcd\""), b"abcd");
        assert_eq!(p("-1024"), [0x00, 0xfc, 0xff, 0xff]);
        assert_eq!(p("66"), [0x42]);
        assert_eq!(p("0xFF0X1"), [0xff, 0x01]);
        assert_eq!(p("\"123\"0xFFeeCC"), [0x31, 0x32, 0x33, 0xff, 0xee, 0xcc]);
        assert_eq!(p("0xff0x14"), [0xff, 0x14]);
        assert_eq!(p("0"), [0]);
        assert_eq!(p("0xdeadbeef"), [0xde, 0xad, 0xbe, 0xef]);
        // fio's t/jobs: an odd number of hex digits, and a concatenation.
        assert_eq!(p("0xaaa"), [0x0a, 0xaa]);
        assert_eq!(
            p("\"abcd\"-120xdeadface"),
            [b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff, 0xde, 0xad, 0xfa, 0xce]
        );
    }

    #[test]
    fn files_are_read_by_the_callers_reader() {
        let read = |name: &str| -> std::io::Result<Vec<u8>> {
            match name {
                "t0027.pattern" => Ok(vec![1, 2, 3]),
                "empty" => Ok(vec![]),
                _ => Err(std::io::Error::from_raw_os_error(2)),
            }
        };
        let p = parse_pattern_with("verify_pattern", "'t0027.pattern'0x04", Some(&read));
        assert_eq!(p.unwrap(), [1, 2, 3, 4]);
        assert!(has_file("'t0027.pattern'") && has_file("0x01'f'"));
        assert!(!has_file("\"it's\"") && !has_file("0xff"));
        for bad in ["'nope'", "'empty'", "'open"] {
            let e = parse_pattern_with("buffer_pattern", bad, Some(&read))
                .unwrap_err()
                .0;
            assert!(e.starts_with("buffer_pattern="), "{bad}: {e}");
        }
    }

    #[test]
    fn bad_pieces_are_refused_naming_the_option() {
        for bad in [
            "'t0027.pattern'",
            "%o",
            "\"abc",
            "zz",
            "99999999999",
            "",
            "0x",
        ] {
            let e = parse_pattern("buffer_pattern", bad).unwrap_err().0;
            assert!(e.starts_with("buffer_pattern="), "{bad}: {e}");
        }
    }
}
