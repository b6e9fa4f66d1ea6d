//! Sizes and durations: parsed and printed in one place so they read the same everywhere.

use super::PlanError;

/// Bytes [start, end) of a file or device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    pub start: u64,
    pub end: u64,
}

impl Span {
    pub const fn new(start: u64, end: u64) -> Span {
        Span { start, end }
    }

    /// Its bytes.
    pub const fn len(&self) -> u64 {
        self.end - self.start
    }

    pub const fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// Whether [offset, offset + len) lies inside it.
    pub const fn holds(&self, offset: u64, len: u64) -> bool {
        self.start <= offset && offset + len <= self.end
    }

    /// Whether [offset, offset + len) touches it.
    pub const fn touches(&self, offset: u64, len: u64) -> bool {
        offset < self.end && offset + len > self.start
    }
}

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

/// A binary unit of throughput, for figures a tool keeps in KiB/s (iozone, bonnie++) shown as
/// people read them: never a seven-digit KiB/s.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RateUnit {
    KiB,
    MiB,
    GiB,
}

impl RateUnit {
    /// The unit in which figures up to `max` bytes per second read best: KiB/s under 1 MiB/s,
    /// MiB/s under 100 GiB/s (at most "102,399"), else GiB/s.
    pub fn fitting(max: f64) -> RateUnit {
        if max < (1u64 << 20) as f64 {
            RateUnit::KiB
        } else if max < (100u64 << 30) as f64 {
            RateUnit::MiB
        } else {
            RateUnit::GiB
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RateUnit::KiB => "KiB/s",
            RateUnit::MiB => "MiB/s",
            RateUnit::GiB => "GiB/s",
        }
    }

    /// The bytes per second of one of it.
    pub fn bytes(self) -> f64 {
        match self {
            RateUnit::KiB => 1024.0,
            RateUnit::MiB => 1048576.0,
            RateUnit::GiB => 1073741824.0,
        }
    }

    /// A figure in this unit, without it: at least three significant digits, thousands
    /// separated (0.25, 27.0, 381, 11,461).
    pub fn figure(self, bytes_per_sec: f64) -> String {
        let v = bytes_per_sec / self.bytes();
        if v.abs() >= 99.95 {
            format_count(v)
        } else if v.abs() >= 9.995 {
            format!("{v:.1}")
        } else {
            format!("{v:.2}")
        }
    }

    /// A figure in this unit to a tenth, thousands separated (11,461.3): the exact figure a
    /// rounded one stands for.
    pub fn precise(self, bytes_per_sec: f64) -> String {
        let tenths = (bytes_per_sec / self.bytes() * 10.0).round().max(0.0);
        format!(
            "{}.{}",
            format_count((tenths / 10.0).floor()),
            tenths % 10.0
        )
    }
}

/// Throughput in the binary unit that reads best for it: 512 KiB/s, 11,461 MiB/s, 120 GiB/s.
pub fn format_rate(bytes_per_sec: f64) -> String {
    let u = RateUnit::fitting(bytes_per_sec);
    format!("{} {}", u.figure(bytes_per_sec), u.name())
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
    fn rates_print_in_binary_units_with_separators() {
        assert_eq!(format_rate(381.0 * 1048576.0), "381 MiB/s");
        assert_eq!(format_rate(11_735_972.0 * 1024.0), "11,461 MiB/s");
        assert_eq!(format_rate(27.04 * 1048576.0), "27.0 MiB/s");
        assert_eq!(format_rate(512.0 * 1024.0), "512 KiB/s");
        assert_eq!(format_rate(120.0 * 1073741824.0), "120 GiB/s");
        assert_eq!(RateUnit::MiB.figure(0.25 * 1048576.0), "0.25");
        assert_eq!(RateUnit::fitting(2e9), RateUnit::MiB);
        assert_eq!(RateUnit::MiB.precise(11_735_972.0 * 1024.0), "11,460.9");
        assert_eq!(RateUnit::MiB.precise(0.04 * 1048576.0), "0.0");
    }

    #[test]
    fn bytes_print_with_binary_units() {
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_bytes(4096), "4 KiB");
        assert_eq!(format_bytes(1536 << 20), "1.50 GiB");
    }
}
