//! Latency over time in the study: every record's interval histograms in one file beside
//! results.jsonl, `latency.hlog`, in HdrHistogram's interval log format (the `.hlog` that
//! HdrHistogram's HistogramLogProcessor, HdrHistogram's plotters and the `hdrhistogram` crate
//! read): a header, then one line per interval,
//!
//! ```text
//! Tag=r3,1761300000.250,1.000,0.532,HISTFAAAA...
//! ```
//!
//! (the record's tag, the interval's start in seconds since the epoch, its length in seconds,
//! its largest latency in milliseconds, and the histogram in HdrHistogram's compressed V2
//! encoding, base64). A record in results.jsonl carries only its tag and the interval
//! (`latency_log`), so its line stays small. Lines are appended, flushed and synced before the
//! record that names them; a line of a record that never made it to results.jsonl is ignored.

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

use crate::metrics::hist::{self, Hist, HistError};
use crate::metrics::timeline::Timeline;

/// The file's name in the study directory.
pub const FILE: &str = "latency.hlog";

/// The most base64 bytes an interval's histogram takes: past it, it is stored with fewer
/// significant digits (2, then 1), so a minute of phase stays well under 100 KB.
const BUDGET: usize = 1400;

/// A record's latency over time: where its intervals are, and the intervals once read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyLog {
    /// The file holding the intervals (`latency.hlog`) and the tag of their lines.
    pub file: String,
    pub tag: String,
    /// The interval, in seconds, and how many there are.
    pub interval_s: f64,
    pub intervals: usize,
    /// The intervals themselves: read from the file with the records, written to it with the
    /// record; never in results.jsonl.
    #[serde(skip)]
    pub lines: Vec<Interval>,
}

/// One interval as the log has it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Interval {
    /// Its start, in seconds since the epoch, and its length in seconds.
    pub start_s: f64,
    pub length_s: f64,
    /// Its largest latency, in milliseconds (the log's Interval_Max).
    pub max_ms: f64,
    /// The histogram (nanoseconds): HdrHistogram's compressed V2 encoding, base64.
    pub hist: String,
}

impl Interval {
    pub fn decode(&self) -> Result<Hist, HistError> {
        hist::decode(&self.hist)
    }
}

fn encode(h: &Hist) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serialising to memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl LatencyLog {
    /// A merged timeline as the log stores it (the tag is given when the record is written).
    pub fn of(t: &Timeline) -> LatencyLog {
        let lines: Vec<Interval> = t
            .slices
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut h = s.to_hist(2);
                let mut text = encode(&h);
                if text.len() > BUDGET {
                    h = s.to_hist(1);
                    text = encode(&h);
                }
                Interval {
                    start_s: t.start_epoch_s + i as f64 * t.width_s,
                    length_s: t.length_s(i),
                    max_ms: if h.is_empty() {
                        0.0
                    } else {
                        h.max() as f64 / 1e6
                    },
                    hist: text,
                }
            })
            .collect();
        LatencyLog {
            file: FILE.to_string(),
            tag: String::new(),
            interval_s: t.width_s,
            intervals: lines.len(),
            lines,
        }
    }

    /// The log's lines of this record, under `tag`.
    pub fn text(&self, tag: &str) -> String {
        let mut out = String::new();
        for l in &self.lines {
            out.push_str(&line(tag, l));
        }
        out
    }
}

/// One interval's line.
pub fn line(tag: &str, l: &Interval) -> String {
    format!(
        "Tag={tag},{:.3},{:.3},{:.3},{}\n",
        l.start_s, l.length_s, l.max_ms, l.hist
    )
}

/// The header a log starts with (HdrHistogram's Java writer's, with an explicit base time of
/// 0: the intervals' timestamps are seconds since the epoch).
pub fn header(start_s: f64, what: &str) -> String {
    let when = crate::metrics::clock::rfc3339(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(start_s.max(0.0)),
    );
    format!(
        "#[{what}]\n#[Histogram log format version 1.3]\n#[StartTime: {start_s:.3} (seconds since epoch), {when}]\n#[BaseTime: 0.000 (seconds since epoch)]\n#[MaxValueDivisor: 1000000.000]\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"
    )
}

/// A tag as the log allows it (no comma, space or line break).
pub fn clean_tag(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == ',' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// Every tagged interval of a log, by tag, in the order written. A line that does not read, or
/// whose histogram does not decode (a torn last line), is skipped: it belongs to no record.
pub fn parse(text: &str) -> std::collections::BTreeMap<String, Vec<Interval>> {
    let mut out: std::collections::BTreeMap<String, Vec<Interval>> = Default::default();
    for raw in text.lines() {
        if !raw.starts_with("Tag=") {
            continue;
        }
        let one = format!("{raw}\n");
        let Some(Ok(LogEntry::Interval(h))) = IntervalLogIterator::new(one.as_bytes()).next()
        else {
            continue;
        };
        let Some(tag) = h.tag() else { continue };
        if hist::decode(h.encoded_histogram()).is_err() {
            continue;
        }
        out.entry(tag.as_str().to_string())
            .or_default()
            .push(Interval {
                start_s: h.start_timestamp().as_secs_f64(),
                length_s: h.duration().as_secs_f64(),
                max_ms: h.max(),
                hist: h.encoded_histogram().to_string(),
            });
    }
    out
}

/// The number after the largest `Tag=rN` of a log: the next record's tag.
pub fn next_tag(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.strip_prefix("Tag=r"))
        .filter_map(|l| l.split(',').next()?.parse::<u64>().ok())
        .max()
        .map_or(1, |n| n + 1)
}

#[cfg(test)]
mod tests;
