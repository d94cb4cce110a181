//! What a layout records: provenance, verification, the bench workload,
//! reference figures, deviations and allows.

use super::{Cx, call_shape};
use crate::parse::{Range, Value};
use pd_dsl_core::Spanned;
use pd_dsl_core::rules::did_you_mean;
use pd_dsl_core::spec::{
    AllowSpec, BenchSpec, DeviationSpec, FigureSpec, ProvenanceSpec, Verification,
};

impl Cx {
    pub(super) fn provenance(&mut self, v: &Value) -> ProvenanceSpec {
        let mut p = ProvenanceSpec::default();
        let Some(b) = self.block(v, "provenance") else {
            return p;
        };
        let f = self.fields(
            &b.entries,
            &["recorded", "derived_from", "sources", "refresh"],
            "provenance",
        );
        match f.get("recorded") {
            Some(e) => p.recorded = self.string(&e.value, "recorded").unwrap_or_default(),
            None => self.missing(Range::of(b.span), "provenance", "recorded: \"YYYY-MM-DD\""),
        }
        if let Some(e) = f.get("derived_from") {
            p.derived_from = self.string(&e.value, "derived_from");
        }
        if let Some(e) = f.get("sources") {
            p.sources = self.strings(&e.value, "sources");
        }
        if let Some(e) = f.get("refresh") {
            p.refresh = self.strings(&e.value, "refresh");
        }
        p
    }

    pub(super) fn verified(&mut self, v: &Value) -> Spanned<Verification> {
        const FORMS: &str = "`never`, `on(\"v0.21.0rc1\")` or `before(\"v0.21.0rc1\")`";
        match v {
            Value::Ident(i) if i == "never" => {
                Spanned::new(Verification::Never, self.span_site(i.span()))
            }
            Value::Call(f, _, args) if f == "on" || f == "before" => {
                let site = self.span_site(f.span());
                let tag = match args.as_slice() {
                    [a] => self.string(a, "verified"),
                    _ => {
                        self.expected(v, &format!("one image tag, like {FORMS}"), "verified");
                        None
                    }
                };
                match tag {
                    Some(t) if f == "on" => Spanned::new(Verification::On(t), site),
                    Some(t) => Spanned::new(Verification::Before(t), site),
                    None => Spanned::default(),
                }
            }
            _ => {
                let hint = match v {
                    Value::Ident(i) | Value::Call(i, _, _) => {
                        did_you_mean(&i.to_string(), ["never", "on", "before"])
                    }
                    _ => String::new(),
                };
                self.err(
                    v.range(),
                    format!("found {}, expected {FORMS}{hint}", v.describe()),
                );
                Spanned::default()
            }
        }
    }

    pub(super) fn bench(&mut self, v: &Value) -> Option<BenchSpec> {
        let b = self.block(v, "bench")?;
        let f = self.fields(
            &b.entries,
            &[
                "input_len",
                "output_len",
                "num_prompts",
                "request_rate",
                "max_concurrency",
            ],
            "bench",
        );
        let req = |cx: &mut Cx, k: &str| match f.get(k) {
            Some(e) => cx.int(&e.value, k),
            None => {
                cx.missing(Range::of(b.span), "bench", &format!("{k}: N"));
                None
            }
        };
        let input_len = req(self, "input_len");
        let output_len = req(self, "output_len");
        let num_prompts = req(self, "num_prompts");
        let request_rate = match f.get("request_rate") {
            Some(e) => match &e.value {
                Value::Int(i) if i.suffix().is_empty() => Some(Spanned::new(
                    i.base10_digits().to_owned(),
                    self.span_site(i.span()),
                )),
                Value::Float(x) if x.suffix().is_empty() => Some(Spanned::new(
                    x.base10_digits().to_owned(),
                    self.span_site(x.span()),
                )),
                Value::Ident(i) if i == "inf" => {
                    Some(Spanned::new("inf".to_owned(), self.span_site(i.span())))
                }
                other => {
                    self.expected(other, "a number or `inf`", "request_rate");
                    None
                }
            },
            None => None,
        };
        let max_concurrency = match f.get("max_concurrency") {
            Some(e) => self.int(&e.value, "max_concurrency"),
            None => None,
        };
        Some(BenchSpec {
            input_len: input_len?,
            output_len: output_len?,
            num_prompts: num_prompts?,
            request_rate,
            max_concurrency,
        })
    }

    pub(super) fn figures(&mut self, v: &Value) -> Vec<FigureSpec> {
        let Value::List(_, items) = v else {
            self.expected(
                v,
                "a list `[{ metric: ..., value: ..., context: ... }]`",
                "figures",
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items {
            let Some(b) = self.block(item, "figures") else {
                continue;
            };
            let f = self.fields(&b.entries, &["metric", "value", "context"], "figures");
            let get = |cx: &mut Cx, k: &str| match f.get(k) {
                Some(e) => cx.string(&e.value, k),
                None => {
                    cx.missing(Range::of(b.span), "figures", &format!("{k}: \"...\""));
                    None
                }
            };
            let (metric, value, context) = (
                get(self, "metric"),
                get(self, "value"),
                get(self, "context"),
            );
            if let (Some(metric), Some(value), Some(context)) = (metric, value, context) {
                out.push(FigureSpec {
                    metric,
                    value,
                    context,
                });
            }
        }
        out
    }

    pub(super) fn deviate(&mut self, v: &Value) -> Option<DeviationSpec> {
        match v {
            Value::Call(_, _, args) if args.len() == 2 => {
                let what = self.string(&args[0], "deviate");
                let why = self.string(&args[1], "deviate");
                Some(DeviationSpec {
                    what: what?,
                    why: why?,
                })
            }
            _ => {
                self.err(
                    v.range(),
                    format!(
                        "found {}, expected `deviate(\"what differs\", \"why\")`: a deviation states what differs from upstream and why",
                        call_shape(v)
                    ),
                );
                None
            }
        }
    }

    pub(super) fn allow(&mut self, v: &Value) -> Option<AllowSpec> {
        match v {
            Value::Call(_, _, args) if args.len() == 2 => {
                let rule = match &args[0] {
                    Value::Ident(_) => self.name(&args[0], "allow"),
                    other => {
                        self.expected(other, "a rule name like `kv_port_in_adxl_range`", "allow");
                        None
                    }
                };
                let reason = self.string(&args[1], "allow");
                Some(AllowSpec {
                    rule: rule?,
                    reason: reason?,
                })
            }
            _ => {
                self.err(
                    v.range(),
                    format!(
                        "found {}, expected `allow(rule_name, \"reason\")`: an acknowledged deviation names its rule and gives a reason",
                        call_shape(v)
                    ),
                );
                None
            }
        }
    }
}
