//! Latency histograms (HdrHistogram, 3 significant digits, 1 ns to 1 hour). Records keep the whole
//! histogram, encoded as HdrHistogram's standard compressed V2 form in base64 (the form
//! HdrHistogram's log tools read), so percentiles can be recomputed and merged at report time.

use std::collections::BTreeMap;

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

pub type Hist = Histogram<u64>;

const HIGHEST_NS: u64 = 3_600_000_000_000;

pub fn new() -> Hist {
    with_sigfig(3)
}

/// A histogram over the same range with `sigfig` significant digits (1 to 3).
pub fn with_sigfig(sigfig: u8) -> Hist {
    Histogram::new_with_bounds(1, HIGHEST_NS, sigfig.clamp(1, 3)).expect("valid histogram bounds")
}

pub fn encode(h: &Hist) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serialising to memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A stored histogram that cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum HistError {
    #[error("histogram is not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("histogram does not decode: {0}")]
    Decode(String),
}

pub fn decode(text: &str) -> Result<Hist, HistError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| HistError::Decode(format!("{e:?}")))
}

/// fio's default percentiles (its `percentile_list`).
pub const FIO_PERCENTILES: &[f64] = &[
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// fio's percentiles of a histogram, keyed as fio's JSON keys them (`"99.900000"`).
pub fn fio_percentiles(h: &Hist) -> BTreeMap<String, u64> {
    FIO_PERCENTILES
        .iter()
        .map(|q| (format!("{q:.6}"), h.value_at_quantile(q / 100.0)))
        .collect()
}

/// The summary figures every latency metric carries, under `prefix` (e.g. "lat" → lat_p99_ns).
pub fn summarize(h: &Hist, prefix: &str, out: &mut BTreeMap<String, f64>) {
    if h.is_empty() {
        return;
    }
    let mut put = |k: &str, v: f64| {
        out.insert(format!("{prefix}_{k}_ns"), v);
    };
    put("min", h.min() as f64);
    put("mean", h.mean());
    put("p50", h.value_at_quantile(0.50) as f64);
    put("p90", h.value_at_quantile(0.90) as f64);
    put("p99", h.value_at_quantile(0.99) as f64);
    put("p999", h.value_at_quantile(0.999) as f64);
    put("max", h.max() as f64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_decodes_and_summarizes() {
        let mut h = new();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let back = decode(&encode(&h)).unwrap();
        assert_eq!(back.len(), 1000);
        assert_eq!(back.max(), h.max());
        let mut m = BTreeMap::new();
        summarize(&back, "lat", &mut m);
        let p50 = m["lat_p50_ns"];
        assert!((499_000.0..=501_000.0).contains(&p50), "{p50}");
        assert!((m["lat_mean_ns"] - 500_500.0).abs() < 1000.0);
        assert!(decode("not base64!").is_err());
    }
}
