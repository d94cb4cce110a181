//! The pipeline and the generated code: parse → lower → check → expand.

use crate::lower::{self, Lowered};
use crate::parse::Layout;
use proc_macro2::TokenStream;
use quote::quote;
use syn::Error;

/// `layout! { ... }` as a function of tokens, so unit tests can call it.
pub fn layout(input: TokenStream) -> TokenStream {
    match run(input) {
        Ok(json) => expand(&json),
        Err(errors) => fallback(errors),
    }
}

/// Every error of the layout, in source order, or the lowered spec as JSON.
fn run(input: TokenStream) -> Result<String, Vec<Error>> {
    let layout: Layout = syn::parse2(input).map_err(|e| vec![e])?;
    let lowered = lower::lower(&layout);
    let mut errors = lowered.errors.clone();
    // The same rule code the runtime runs. After a lowering error the spec
    // has holes; rules about values that were not written (site NONE) would
    // only echo that error, so they are dropped.
    if let Err(diags) = pd_dsl_core::check(&lowered.spec) {
        let clean = errors.is_empty();
        errors.extend(
            diags
                .iter()
                .filter(|d| clean || (d.site.is_known() && lowered.trusts(d.rule)))
                .map(|d| lower::error(lowered.range(d.site), d)),
        );
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    to_json(&lowered)
}

fn to_json(lowered: &Lowered) -> Result<String, Vec<Error>> {
    let bug = |what: String| {
        vec![Error::new(
            proc_macro2::Span::call_site(),
            format!(
                "found {what}, expected a lossless round trip: this is a pd-dsl bug, please report it"
            ),
        )]
    };
    let json = serde_json::to_string(&lowered.spec)
        .map_err(|e| bug(format!("a layout that does not serialize ({e})")))?;
    // The expansion rebuilds the spec from this JSON at run time with the
    // same serde code; proving the round trip here means the run-time
    // rebuild cannot fail, so its fallback is unreachable.
    let back: pd_dsl_core::LayoutSpec = serde_json::from_str(&json)
        .map_err(|e| bug(format!("a layout whose JSON does not parse back ({e})")))?;
    match serde_json::to_string(&back) {
        Ok(again) if again == json => Ok(json),
        _ => Err(bug("a layout whose JSON changes on a round trip".to_owned())),
    }
}

/// The checked spec, rebuilt from the JSON its lowering serialized to (the
/// spec's serde form is lossless apart from sites, which only the checker
/// needs and it has already run). `to_json` proved at compile time that this
/// JSON parses back to the same spec, so the default is never taken.
fn expand(json: &str) -> TokenStream {
    quote! {
        {
            let __spec: ::pd_dsl::LayoutSpec =
                ::pd_dsl::__private::serde_json::from_str(#json).unwrap_or_default();
            __spec
        }
    }
}

/// Our errors plus a well-typed value, so nothing else is reported.
fn fallback(errors: Vec<Error>) -> TokenStream {
    let errors = errors.iter().map(Error::to_compile_error);
    quote! {
        {
            #(#errors)*
            <::pd_dsl::LayoutSpec as ::core::default::Default>::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> TokenStream {
        quote! {
            /// A demo.
            name: "demo/a3-1p1d",
            model: deepseek_v4_flash_w8a8_mtp,
            hardware: a3,
            image: "v0.21.0rc1",
            topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
            connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
            ports: { api: 7100, dp_rpc: 12321 },
            proxy: { port: 1999 },
            serve: { expert_parallel: true, trust_remote_code: true, speculative: { method: mtp, tokens: 1, enforce_eager: true },
                     additional_config: { "enable_cpu_binding": true, "eplb_config": { "expert_map_path": null, "num_redundant_experts": 16 }, "x_extra": [1, -2, 0.9, null] },
                     flags: ["--tokenizer-mode" = "slow"], env: { HCCL_BUFFSIZE: 1024, LD_LIBRARY_PATH: prepend("/opt/lib") } },
            prefill: { max_num_batched_tokens: 8192, max_num_seqs: 16, graph: eager, gpu_memory_utilization: 0.92 },
            decode: { max_num_batched_tokens: 120, max_num_seqs: 60, graph: full_decode_only },
            provenance: { recorded: "2026-06-27" },
            verified: before("v0.21.0rc1"),
            allow(unknown_additional_config_key, "arbitrary JSON (arrays, negatives, floats, null) must round-trip"),
            bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: inf },
        }
    }

    #[test]
    fn valid_layout_round_trips_through_json() {
        let json = match run(valid()) {
            Ok(j) => j,
            Err(e) => unreachable!("{:?}", e.iter().map(Error::to_string).collect::<Vec<_>>()),
        };
        let back: pd_dsl_core::LayoutSpec = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(
            serde_json::to_string(&back).ok().as_deref(),
            Some(json.as_str())
        );
        assert_eq!(back.summary, ["A demo."]);
        assert_eq!(back.topology[1].dp.value, 16);
        let g = back
            .roles
            .get(&pd_dsl_core::Role::Prefill)
            .and_then(|p| p.gpu_memory_utilization.clone());
        assert_eq!(g.map(|g| g.value).as_deref(), Some("0.92"));
        assert!(pd_dsl_core::check(&back).is_ok());
        assert!(layout(valid()).to_string().contains("from_str"));
    }

    fn errors(tokens: TokenStream) -> Vec<String> {
        match run(tokens) {
            Ok(_) => Vec::new(),
            Err(e) => e.iter().map(Error::to_string).collect(),
        }
    }

    #[test]
    fn unknown_field_suggests_and_others_still_reported() {
        let e = errors(quote! {
            nam: "demo/x",
            model: deepseek_v4_flash_w8a8_mtp,
            topology: <prefill 1 x dp4tp; decode 1 x dp16tp1>,
            serve: { max_num_seqs: "16" },
        });
        assert!(
            e.iter()
                .any(|m| m.contains("unknown field `nam`") && m.contains("did you mean `name`?")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|m| m.contains("found `dp4tp`, expected `dp<N>tp<M>`")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|m| m.contains("expected an integer for `max_num_seqs`")),
            "{e:?}"
        );
        // `nam` was meant as `name`: one mistake, one error, no "missing".
        assert!(!e.iter().any(|m| m.starts_with("missing `name:")), "{e:?}");
        // A field that is not a near miss of `name` leaves it missing.
        let e = errors(quote! { host: "demo/x" });
        assert!(
            e.iter()
                .any(|m| m.contains("unknown field `host`") && !m.contains("did you mean")),
            "{e:?}"
        );
        assert!(e.iter().any(|m| m.starts_with("missing `name:")), "{e:?}");
    }

    #[test]
    fn parse_errors_skip_to_the_next_field() {
        let e = errors(quote! { name "x", image: , model: a b, });
        assert!(
            e.iter().any(|m| m.contains("expected `:` after `name`")),
            "{e:?}"
        );
        assert!(
            e.iter().any(|m| m.contains("expected a value for `image`")),
            "{e:?}"
        );
        assert!(
            e.iter().any(|m| m.contains("expected `,` between fields")),
            "{e:?}"
        );
    }

    #[test]
    fn error_output_has_a_typed_fallback() {
        let out = layout(quote! { name: 1 }).to_string();
        assert!(out.contains("compile_error"));
        assert!(out.contains("Default"));
    }
}
