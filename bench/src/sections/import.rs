//! `import`: `catalog lint` and `catalog import` over deployments made from
//! the importer's fixtures, beside the first stage alone.

use crate::{Res, repo};
use pd_dsl_bench::{interleave, median, ms, ratio};
use std::time::Duration;

/// `import`: `catalog lint` and `catalog import` in one process over 100
/// deployments made from the importer's fixtures (issue 11: < 1 s), side by
/// side with the first stage alone (the YAML crate on the configs' bytes, the
/// shell lexer on the scripts).
pub(crate) fn section_import(quick: bool) -> Res<()> {
    use pd_dsl::import;
    use pd_dsl_bench::import::{Unit, deployments, fixtures};
    let n = 100;
    let rounds = if quick { 7 } else { 41 };
    let base = fixtures(&repo().join("tests/fixtures/import")).map_err(|e| e.to_string())?;
    let units = deployments(&base, n);
    let (configs, scripts): (Vec<&Unit>, Vec<&Unit>) = units.iter().partition(|u| u.yaml);
    let bytes = |us: &[&Unit]| -> usize {
        us.iter()
            .flat_map(|u| &u.inputs)
            .map(|i| i.text.len())
            .sum()
    };
    // Every variant imports and passes the rules with its acknowledgements,
    // as its fixture does: the timing covers the whole path, not an early
    // read error.
    let (mut findings, mut errors) = (0usize, 0usize);
    for u in &units {
        let imported =
            import::import(&u.inputs, &u.opts).map_err(|e| format!("{}: {e}", u.label))?;
        let f = import::findings(&imported);
        errors += f.iter().filter(|f| f.level == import::Level::Error).count();
        findings += f.len();
        import::finish(&imported).map_err(|f| format!("{}: {} findings", u.label, f.len()))?;
    }
    let all: Vec<&Unit> = units.iter().collect();
    let lint = |us: &[&Unit]| {
        for u in us {
            std::hint::black_box(import::lint_unit(&u.inputs, &u.opts));
        }
    };
    let mut lint_all = || lint(&all);
    let mut import_all = || {
        for u in &units {
            let printed = import::import(&u.inputs, &u.opts)
                .ok()
                .and_then(|i| import::finish(&i).ok())
                .map(|spec| import::print::layout_file(&spec));
            std::hint::black_box(printed);
        }
    };
    let mut lint_configs = || lint(&configs);
    let mut yaml_alone = || {
        for u in &configs {
            for i in &u.inputs {
                let v: Result<serde_json::Value, _> = serde_saphyr::from_str(&i.text);
                std::hint::black_box(v.ok());
            }
        }
    };
    let mut lint_scripts = || lint(&scripts);
    let mut lex_alone = || {
        for u in &scripts {
            for (k, i) in u.inputs.iter().enumerate() {
                std::hint::black_box(import::shell::commands(k, &i.text).ok());
            }
        }
    };
    let s = interleave(
        rounds,
        &mut [
            &mut lint_all,
            &mut import_all,
            &mut lint_configs,
            &mut yaml_alone,
            &mut lint_scripts,
            &mut lex_alone,
        ],
    );
    let m: Vec<Duration> = s.iter().map(|s| median(s)).collect();
    println!(
        "## Import and lint in one process ({} deployments: {} e2e configs, {} script sets; medians of {rounds} interleaved rounds)\n",
        units.len(),
        configs.len(),
        scripts.len()
    );
    println!(
        "Made from the {} fixtures of `tests/fixtures/import/` (configs and script sets), each pass with its addresses and DP RPC port moved; every one imports and passes the rules with its acknowledgements ({findings} findings, {errors} errors).\n",
        base.len()
    );
    println!("| measurement | deployments | input bytes | median | per deployment | ratio |");
    println!("|---|---|---|---|---|---|");
    let per = |d: Duration, k: usize| ms(d / u32::try_from(k.max(1)).unwrap_or(u32::MAX));
    let rows: [(&str, &[&Unit], usize, Option<usize>); 6] = [
        (
            "lint all (`lint_unit`: import + every finding; target < 1 s)",
            &all,
            0,
            None,
        ),
        (
            "import all (`import` + `finish` + `print::layout_file`)",
            &all,
            1,
            None,
        ),
        ("lint the e2e configs", &configs, 2, Some(3)),
        (
            "the YAML crate alone on the same bytes (`serde_saphyr` to a JSON value)",
            &configs,
            3,
            Some(3),
        ),
        ("lint the script sets", &scripts, 4, Some(5)),
        (
            "the shell lexer alone on the same bytes (`import::shell::commands`)",
            &scripts,
            5,
            Some(5),
        ),
    ];
    for (label, us_, i, against) in rows {
        println!(
            "| {label} | {} | {} | {} | {} | {} |",
            us_.len(),
            bytes(us_),
            ms(m[i]),
            per(m[i], us_.len()),
            against.map_or_else(String::new, |j| ratio(m[i], m[j]))
        );
    }
    println!(
        "\n{} deployments linted in {} (target < 1 s: {})\n",
        units.len(),
        ms(m[0]),
        if m[0] < Duration::from_secs(1) {
            "met"
        } else {
            "not met"
        }
    );
    Ok(())
}
