//! The capture sizes an engine settles on, typed or not: the
//! platform's default cap (vllm-ascend's generated `default_capture_cap`)
//! and vLLM's default grid (the generated `default_capture_grid`).
//! `scripts/upstream/graph_sizes_oracle.py` runs the released code of each
//! image against [`Release::settled_capture_sizes`]
//! (pd-dsl-core/tests/graph_sizes_oracle.rs).

use serde::Deserialize;

use super::{Release, VllmRelease};

/// How `VllmConfig._set_cudagraph_sizes` (vllm/config/vllm.py) lists the
/// capture sizes when none is typed (the generated `default_capture_grid`;
/// the facts refuse a release whose grid is not [`default_size_grid`]'s).
#[derive(Debug, Deserialize)]
pub struct DefaultCaptureGrid {
    /// `max_num_batched_tokens` is added when it is not above the largest
    /// size (from vLLM 0.20.2).
    pub appends_max_num_tokens: bool,
    /// `path:line` of the `assert` that the largest size kept is at least
    /// 1, which typed sizes all above `max_num_batched_tokens` fail.
    pub positive_largest: String,
    /// `path:line` of the function.
    pub source: String,
}

/// vllm-ascend's default `max_cudagraph_capture_size`
/// (`apply_config_platform_defaults`, vllm_ascend/platform.py):
/// `min(max_num_seqs x (tokens + 1) x per_seq, ceiling)`.
#[derive(Debug, Deserialize)]
pub struct DefaultCaptureCap {
    /// The factor after the decode query length (1: vllm-ascend drops the
    /// `* 2` vLLM's own default has).
    pub per_seq: u64,
    /// The constant bound.
    pub ceiling: u64,
    /// `_setup_compile_backend` adds the cap, bounded by
    /// `max_num_batched_tokens`, to the sizes (from v0.30.0rc1).
    pub unions_cap: bool,
    /// `path:line` of the helper's `return`.
    pub source: String,
}

/// vLLM's default capture sizes up to `largest`: 1, 2 and 4, every 8 below
/// 256, then every 16 (`_set_cudagraph_sizes`, vllm/config/vllm.py @0.18.0
/// L1287 … @0.30.0; the facts' generator requires these statements as
/// written).
pub fn default_size_grid(largest: u64) -> Vec<u64> {
    let mut sizes: Vec<u64> = [1, 2, 4].into_iter().filter(|&s| s <= largest).collect();
    if largest >= 8 {
        sizes.extend((8..largest.saturating_add(1).min(256)).step_by(8));
    }
    if largest >= 256 {
        sizes.extend((256..=largest).step_by(16));
    }
    sizes
}

impl Release {
    /// The capture sizes an engine of this image settles on, in the order
    /// start-up runs, for `max_num_seqs`, `max_num_batched_tokens` and
    /// `tokens` speculative tokens:
    ///
    /// - `typed` sizes: vLLM keeps those at most `max_num_batched_tokens`
    ///   (none kept fails its `positive_largest` assert when vllm-ascend
    ///   sizes the graphs again);
    /// - none typed (and no largest size set): the platform's default cap,
    ///   vLLM's grid up to it bounded by `max_num_batched_tokens` (which it
    ///   adds where `appends_max_num_tokens`), and where `unions_cap` the
    ///   bounded cap added.
    ///
    /// This is the list before the hardware's sampling
    /// (`update_aclgraph_sizes`, `_prune_reduced_capture_sizes`), which
    /// keeps the smallest and the largest, and before any filter to
    /// multiples of TP. Empty where the engine refuses to start; `None`
    /// without the facts.
    pub fn settled_capture_sizes(
        &self,
        vllm: &VllmRelease,
        typed: &[u64],
        max_num_seqs: u64,
        max_num_batched_tokens: u64,
        tokens: u64,
    ) -> Option<Vec<u64>> {
        let cap = self.default_capture_cap.as_ref()?;
        let grid = vllm.default_capture_grid.as_ref()?;
        let mut sizes = if typed.is_empty() {
            let platform = max_num_seqs
                .saturating_mul(tokens.saturating_add(1))
                .saturating_mul(cap.per_seq)
                .min(cap.ceiling);
            let largest = platform.min(max_num_batched_tokens);
            let mut sizes = default_size_grid(largest);
            if grid.appends_max_num_tokens && max_num_batched_tokens <= largest {
                sizes.push(max_num_batched_tokens);
            }
            if cap.unions_cap {
                sizes.push(largest);
            }
            sizes
        } else {
            typed
                .iter()
                .copied()
                .filter(|&s| s <= max_num_batched_tokens)
                .collect()
        };
        sizes.sort_unstable();
        sizes.dedup();
        Some(sizes)
    }
}

#[cfg(test)]
mod tests {
    use super::default_size_grid;

    #[test]
    fn the_grid_steps_by_8_then_16() {
        assert_eq!(default_size_grid(0), Vec::<u64>::new());
        assert_eq!(default_size_grid(3), vec![1, 2]);
        assert_eq!(default_size_grid(15), vec![1, 2, 4, 8]);
        let g = default_size_grid(290);
        assert_eq!(&g[g.len() - 4..], &[248, 256, 272, 288]);
    }
}
