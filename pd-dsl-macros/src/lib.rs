//! The `layout!` proc macro of pd-dsl: parse → lower → check (the shared
//! rules of `pd-dsl-core`) → expand. The grammar reference is the doc of
//! [`layout!`] (`doc/layout.md`), shown on the re-export `pd_dsl::layout!`.

mod expand;
mod lower;
mod parse;

#[doc = include_str!("../doc/layout.md")]
#[proc_macro]
pub fn layout(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand::layout(input.into()).into()
}
