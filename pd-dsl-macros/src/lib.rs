//! The `layout!` proc macro of pd-dsl: parse → lower → check (the shared
//! rules of `pd-dsl-core`) → expand. The grammar reference is on the
//! re-export `pd_dsl::layout!`.

mod expand;
mod lower;
mod parse;

/// Writes a checked deployment layout; see `pd_dsl::layout!` for the grammar.
#[proc_macro]
pub fn layout(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand::layout(input.into()).into()
}
