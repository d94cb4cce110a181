//! Benchmark support for `pd-dsl-bench` (see `BENCHMARKS.md` at the repo
//! root): timing helpers, the synthetic catalog, and the generated crates
//! that measure what `layout!` adds to `cargo check`.
//!
//! Nothing here runs under `cargo test`; the figures come from the
//! `pd-dsl-bench` binary (`scripts/bench.sh`).

use pd_dsl::{EngineGroup, LayoutSpec, Role, Spanned};
use std::time::{Duration, Instant};

pub mod compile;
pub mod import;

/// Runs `f` once and returns how long it took and what it returned.
pub fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed(), out)
}

/// The median of `samples` (the mean of the middle two for an even count);
/// zero when empty.
pub fn median(samples: &[Duration]) -> Duration {
    let mut s = samples.to_vec();
    s.sort();
    match s.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2,
    }
}

/// Milliseconds with three decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// Microseconds with one decimal.
pub fn us(d: Duration) -> String {
    format!("{:.1} us", d.as_secs_f64() * 1e6)
}

/// `a / b` as a ratio with two decimals (`inf` when `b` is zero).
pub fn ratio(a: Duration, b: Duration) -> String {
    if b.is_zero() {
        "inf".into()
    } else {
        format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64())
    }
}

/// Runs every closure of `fs` once per round, in rotating order so no
/// closure always runs first (machines are noisy: interleaving spreads the
/// noise over all of them), and returns the samples per closure.
pub fn interleave(rounds: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<Vec<Duration>> {
    let n = fs.len();
    let mut samples = vec![Vec::with_capacity(rounds); n];
    for round in 0..rounds {
        for k in 0..n {
            let i = (round + k) % n;
            let start = Instant::now();
            (fs[i])();
            samples[i].push(start.elapsed());
        }
    }
    samples
}

/// The peak resident set of this process (`VmHWM`), in KiB.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// One synthetic PD shape on A3: `prefill P x dpAtpB; decode D x dpCtpE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Prefill engines.
    pub prefill: u64,
    /// Prefill `(dp, tp)`.
    pub prefill_shape: (u64, u64),
    /// Decode engines.
    pub decode: u64,
    /// Decode `(dp, tp)`.
    pub decode_shape: (u64, u64),
}

impl Shape {
    /// `k` prefill engines of DP8 x TP4 and `k` decode engines of DP32 x TP1
    /// (2 A3 nodes each): `16` gives 16P16D over 64 nodes.
    pub const fn large(k: u64) -> Shape {
        Shape {
            prefill: k,
            prefill_shape: (8, 4),
            decode: k,
            decode_shape: (32, 1),
        }
    }

    /// Total DP ranks (one `vllm serve` process each).
    pub const fn ranks(&self) -> u64 {
        self.prefill * self.prefill_shape.0 + self.decode * self.decode_shape.0
    }
}

/// The shapes the synthetic catalog cycles through: the seed page's
/// topologies plus large ones up to 16P16D on 64 A3 nodes.
pub const SYNTHETIC_SHAPES: [Shape; 10] = [
    Shape {
        prefill: 1,
        prefill_shape: (4, 4),
        decode: 1,
        decode_shape: (16, 1),
    },
    Shape {
        prefill: 1,
        prefill_shape: (4, 4),
        decode: 3,
        decode_shape: (16, 1),
    },
    Shape {
        prefill: 2,
        prefill_shape: (4, 4),
        decode: 2,
        decode_shape: (16, 1),
    },
    Shape {
        prefill: 3,
        prefill_shape: (4, 4),
        decode: 1,
        decode_shape: (16, 1),
    },
    Shape {
        prefill: 2,
        prefill_shape: (16, 1),
        decode: 1,
        decode_shape: (32, 1),
    },
    Shape {
        prefill: 2,
        prefill_shape: (2, 8),
        decode: 1,
        decode_shape: (32, 1),
    },
    Shape::large(2),
    Shape::large(4),
    Shape::large(8),
    Shape::large(16),
];

/// The seed layout every synthetic layout is a variant of: the V4-Flash
/// 1P1D (all of its serve settings, env, flags, deviations and allows).
pub fn template() -> LayoutSpec {
    layouts::deepseek_v4_flash::a3_1p1d()
}

/// `template` with another name and topology (A3, so every engine of these
/// shapes occupies whole nodes).
pub fn variant(template: &LayoutSpec, name: &str, shape: Shape) -> LayoutSpec {
    let group = |role: Role, count: u64, (dp, tp): (u64, u64)| EngineGroup {
        role: Spanned::bare(role),
        count: Spanned::bare(count),
        dp: Spanned::bare(dp),
        tp: Spanned::bare(tp),
        ..EngineGroup::default()
    };
    let mut spec = template.clone();
    spec.name = Spanned::bare(name.to_owned());
    spec.provenance.derived_from = None;
    spec.topology = vec![
        group(Role::Prefill, shape.prefill, shape.prefill_shape),
        group(Role::Decode, shape.decode, shape.decode_shape),
    ];
    spec
}

/// `n` valid layouts cycling through [`SYNTHETIC_SHAPES`] (one in ten is
/// 16P16D on 64 nodes). Returns the specs and their total DP ranks.
pub fn synthetic_catalog(n: usize) -> (Vec<LayoutSpec>, u64) {
    let t = template();
    let mut ranks = 0;
    let specs = (0..n)
        .map(|i| {
            let shape = SYNTHETIC_SHAPES[i % SYNTHETIC_SHAPES.len()];
            ranks += shape.ranks();
            let name = format!("synthetic/a3-{i:04}-{}p{}d", shape.prefill, shape.decode);
            variant(&t, &name, shape)
        })
        .collect();
    (specs, ranks)
}

/// `k` copies of one shape as a catalog (for growth with ranks at a fixed
/// per-layout shape).
pub fn repeated(shape: Shape, n: usize) -> Vec<LayoutSpec> {
    let t = template();
    (0..n)
        .map(|i| variant(&t, &format!("synthetic/a3-{i:04}"), shape))
        .collect()
}

/// Least-squares fit `y = a + b x`; returns `(a, b, r^2)`.
pub fn linear_fit(points: &[(f64, f64)]) -> (f64, f64, f64) {
    let n = points.len() as f64;
    if points.len() < 2 {
        return (0.0, 0.0, 0.0);
    }
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x, sy + y));
    let (mx, my) = (sx / n, sy / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in points {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    if sxx == 0.0 {
        return (my, 0.0, 0.0);
    }
    let b = sxy / sxx;
    let a = my - b * mx;
    let r2 = if syy == 0.0 {
        1.0
    } else {
        (sxy * sxy) / (sxx * syy)
    };
    (a, b, r2)
}
