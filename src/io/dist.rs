//! Non-uniform random offsets (fio `random_distribution`): zipf, pareto, normal, zoned. Each
//! picks a slot in 0..n; the hot slots of zipf and pareto are scattered over the region by a
//! fixed bijection (as fio hashes them), unless a centre is given, which puts the hottest there.

use super::DataGen;
use crate::plan::job::Distribution;

pub struct Picker {
    n: u64,
    kind: Kind,
    /// Where rank 0 lands (0..n), when a centre was given.
    center: Option<u64>,
    /// An odd multiplier coprime with n: rank r goes to (r * mul) mod n.
    mul: u64,
}

enum Kind {
    Zipf {
        theta: f64,
        zetan: f64,
        alpha: f64,
        eta: f64,
    },
    Pareto {
        pow: f64,
    },
    Normal {
        mean: f64,
        sd: f64,
    },
    /// (cumulative share of accesses 0..1, first slot, slots).
    Zones(Vec<(f64, u64, u64)>),
}

/// A uniform draw in [0, 1).
fn unit(rng: &mut DataGen) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| (i as f64).powf(-theta)).sum()
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Picker {
    /// A picker over `n` slots of `slot_bytes` each; None for the uniform distribution.
    pub fn new(d: &Distribution, center: Option<f64>, n: u64, slot_bytes: u64) -> Option<Picker> {
        let n = n.max(1);
        let kind = match d {
            // The sequence is walked by `Offsets` (it counts the I/Os).
            Distribution::Random | Distribution::Sequence { .. } => return None,
            Distribution::Zipf(theta) => {
                // Gray et al., "Quickly generating billion-record synthetic databases" (1994).
                let zetan = zeta(n, *theta);
                let zeta2 = zeta(2.min(n), *theta);
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                Kind::Zipf {
                    theta: *theta,
                    zetan,
                    alpha,
                    eta,
                }
            }
            // The share h of the slots takes 1-h of the accesses (h=0.2: 80/20).
            Distribution::Pareto(h) => Kind::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
            Distribution::Normal(sigma) => Kind::Normal {
                mean: center.unwrap_or(0.5) * n as f64,
                sd: sigma / 100.0 * n as f64,
            },
            Distribution::Zoned(z) => Kind::Zones(zones(
                z.iter()
                    .map(|(a, s)| (*a, (s / 100.0 * n as f64).round() as u64)),
                n,
            )),
            Distribution::ZonedAbs(z) => {
                Kind::Zones(zones(z.iter().map(|(a, b)| (*a, b / slot_bytes.max(1))), n))
            }
        };
        let mut mul = (0x9E37_79B9_7F4A_7C15u64 % n) | 1;
        while gcd(mul, n) != 1 {
            mul += 2;
        }
        let center = match kind {
            Kind::Normal { .. } => None,
            _ => center.map(|c| ((c * n as f64) as u64).min(n - 1)),
        };
        Some(Picker {
            n,
            kind,
            center,
            mul,
        })
    }

    /// The rank (0 hottest) of the next access, before it is placed in the region.
    pub fn rank(&self, rng: &mut DataGen) -> u64 {
        let n = self.n;
        match &self.kind {
            Kind::Zipf {
                theta,
                zetan,
                alpha,
                eta,
            } => {
                let u = unit(rng);
                let uz = u * zetan;
                if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(*theta) {
                    1.min(n - 1)
                } else {
                    let r = (n as f64 * (eta * u - eta + 1.0).powf(*alpha)) as u64;
                    r.min(n - 1)
                }
            }
            Kind::Pareto { pow } => ((n as f64 * unit(rng).powf(*pow)) as u64).min(n - 1),
            Kind::Normal { mean, sd } => loop {
                // Box-Muller; draws outside the region are drawn again.
                let (u1, u2) = (unit(rng).max(f64::MIN_POSITIVE), unit(rng));
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                let x = mean + z * sd;
                if x >= 0.0 && x < n as f64 {
                    return x as u64;
                }
            },
            Kind::Zones(z) => {
                let u = unit(rng);
                let (_, first, len) = z
                    .iter()
                    .find(|(cum, _, len)| u < *cum && *len > 0)
                    .or_else(|| z.iter().rev().find(|z| z.2 > 0))
                    .copied()
                    .unwrap_or((1.0, 0, n));
                first + rng.next_u64() % len.max(1)
            }
        }
    }

    /// The slot of the next access.
    pub fn next(&self, rng: &mut DataGen) -> u64 {
        let r = self.rank(rng);
        match (&self.kind, self.center) {
            (Kind::Normal { .. } | Kind::Zones(_), _) => r,
            (_, Some(c)) => (r + c) % self.n,
            (_, None) => ((r as u128 * self.mul as u128) % self.n as u128) as u64,
        }
    }
}

/// Zones laid end to end from the start: (cumulative access share, first slot, slots).
fn zones(z: impl Iterator<Item = (f64, u64)>, n: u64) -> Vec<(f64, u64, u64)> {
    let mut out = Vec::new();
    let (mut cum, mut first) = (0.0, 0u64);
    for (access, slots) in z {
        cum += access / 100.0;
        let len = slots.min(n - first.min(n));
        out.push((cum, first, len));
        first += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(p: &Picker, draws: usize, rng: &mut DataGen) -> Vec<u64> {
        let mut counts = vec![0u64; p.n as usize];
        for _ in 0..draws {
            counts[p.rank(rng) as usize] += 1;
        }
        counts
    }

    #[test]
    fn zipf_follows_its_formula() {
        let mut rng = DataGen::new(11);
        for theta in [0.8, 1.2] {
            let n = 1000u64;
            let p = Picker::new(&Distribution::Zipf(theta), None, n, 4096).unwrap();
            let draws = 400_000;
            let c = shares(&p, draws, &mut rng);
            let z = zeta(n, theta);
            for rank in [0usize, 1] {
                let want = ((rank + 1) as f64).powf(-theta) / z;
                let got = c[rank] as f64 / draws as f64;
                assert!(
                    (got - want).abs() < want * 0.03,
                    "theta {theta} rank {rank}: {got} vs {want}"
                );
            }
            // The top 10% of ranks take about the share the formula gives (the generator is
            // Gray et al.'s approximation beyond rank 2).
            let want: f64 = (1..=100).map(|i| (i as f64).powf(-theta)).sum::<f64>() / z;
            let got = c[..100].iter().sum::<u64>() as f64 / draws as f64;
            assert!(
                (got - want).abs() < 0.05,
                "theta {theta}: top 10% {got} vs {want}"
            );
        }
    }

    #[test]
    fn pareto_normal_and_zones() {
        let mut rng = DataGen::new(12);
        let n = 1000;
        let p = Picker::new(&Distribution::Pareto(0.2), None, n, 4096).unwrap();
        let c = shares(&p, 200_000, &mut rng);
        let hot = c[..200].iter().sum::<u64>() as f64 / 200_000.0;
        assert!(
            (hot - 0.8).abs() < 0.01,
            "pareto:0.2 puts {hot} in the first 20%"
        );
        let p = Picker::new(&Distribution::Normal(10.0), None, n, 4096).unwrap();
        let c = shares(&p, 200_000, &mut rng);
        let within = c[400..600].iter().sum::<u64>() as f64 / 200_000.0;
        assert!((within - 0.683).abs() < 0.01, "±1σ holds {within}");
        let p = Picker::new(
            &Distribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (10.0, 70.0)]),
            None,
            n,
            4096,
        )
        .unwrap();
        let c = shares(&p, 200_000, &mut rng);
        let first = c[..100].iter().sum::<u64>() as f64 / 200_000.0;
        let second = c[100..300].iter().sum::<u64>() as f64 / 200_000.0;
        assert!(
            (first - 0.6).abs() < 0.01 && (second - 0.3).abs() < 0.01,
            "{first} {second}"
        );
        // Placement: a bijection without a centre, rank 0 at the centre with one.
        let p = Picker::new(&Distribution::Zipf(1.2), None, n, 4096).unwrap();
        let mut seen = vec![false; n as usize];
        for r in 0..n {
            let s = ((r as u128 * p.mul as u128) % n as u128) as usize;
            assert!(!seen[s]);
            seen[s] = true;
        }
        let p = Picker::new(&Distribution::Zipf(1.2), Some(0.25), n, 4096).unwrap();
        let at_center = (0..10_000).filter(|_| p.next(&mut rng) == 250).count();
        assert!(at_center > 1500, "{at_center}");
    }
}
