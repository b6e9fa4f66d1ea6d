//! Sizes and durations: parsed and printed in one place so they read the same everywhere.

use super::PlanError;

/// Parses a size such as `4096`, `4k`, `256M`, `1G`, `1GiB`, `10MB`. Suffixes are binary
/// (k = 1024), as in fio and mkfs.
pub fn parse_size(text: &str) -> Result<u64, PlanError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{text}' is not a size: write a number with an optional unit, e.g. 512M or 2G"
        )
        .into());
    }
    let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "ki" | "kib" => 1 << 10,
        "m" | "mb" | "mi" | "mib" => 1 << 20,
        "g" | "gb" | "gi" | "gib" => 1 << 30,
        "t" | "tb" | "ti" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "'{text}' has an unknown size unit '{other}': use k, M, G or T (binary, 1k = 1024)"
            )
            .into())
        }
    };
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a size: '{num}' is not a number"))?;
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(format!("'{text}' is too large").into());
    }
    Ok(bytes.round() as u64)
}

/// Prints bytes with a binary unit: `1.50 GiB`, `512 MiB`, `4.0 KiB`, `100 B`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[i])
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

/// Throughput in decimal megabytes per second, as fio and CrystalDiskMark print it.
pub fn format_mb_per_sec(bytes_per_sec: f64) -> String {
    format!("{:.1} MB/s", bytes_per_sec / 1e6)
}

/// IOPS with thousands separated: 312,456.
pub fn format_count(n: f64) -> String {
    let s = format!("{:.0}", n.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A latency in the unit that reads best: 850 ns, 12.3 us, 4.56 ms, 1.20 s.
pub fn format_ns(ns: f64) -> String {
    format_ns_as(ns, ns)
}

/// A latency in the unit that reads best for `like` (an interval's bounds in its centre's unit:
/// "812.4 us .. 1530.2 us", never "812.4 us .. 1.53 ms").
pub fn format_ns_as(ns: f64, like: f64) -> String {
    let like = like.abs();
    if like < 1e3 {
        format!("{ns:.0} ns")
    } else if like < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if like < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_latencies_print_readably() {
        assert_eq!(format_count(312456.4), "312,456");
        assert_eq!(format_count(999.0), "999");
        assert_eq!(format_count(1000.0), "1,000");
        assert_eq!(format_ns(850.0), "850 ns");
        assert_eq!(format_ns(12_345.0), "12.3 us");
        assert_eq!(format_ns(4_560_000.0), "4.56 ms");
        assert_eq!(format_ns(1.2e9), "1.20 s");
        assert_eq!(format_ns_as(1_530_200.0, 812_400.0), "1530.2 us");
        assert_eq!(format_ns_as(38_152.0, 3_022_059.0), "0.04 ms");
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("1.5g").unwrap(), 3 << 29);
    }

    #[test]
    fn bad_sizes_name_the_input() {
        assert!(parse_size("").unwrap_err().0.contains("not a size"));
        assert!(parse_size("12Q")
            .unwrap_err()
            .0
            .contains("unknown size unit 'q'"));
        assert!(parse_size("M").unwrap_err().0.contains("'M' is not a size"));
    }

    #[test]
    fn bytes_print_with_binary_units() {
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_bytes(4096), "4 KiB");
        assert_eq!(format_bytes(1536 << 20), "1.50 GiB");
    }
}
