
#[cfg(test)]
mod tests {
    use super::super::filters;
    use askama::Template;

    /// A shell template as the renderer's are: `{{ }}` is quoted.
    #[derive(Template)]
    #[template(
        source = "A={{ a }} B={{ b }} N={{ n }} C={{ c|comment }} I={{ i|ident }} P={{ i|inherit }} W=({{ w|words }}) O={{ o|or_empty }}",
        ext = "sh"
    )]
    struct Probe<'a> {
        a: &'a str,
        b: String,
        n: u32,
        c: &'a str,
        i: &'a str,
        w: Vec<&'a str>,
        o: Option<u32>,
    }

    fn probe(i: &str) -> Result<String, askama::Error> {
        Probe {
            a: "it's $(id)",
            b: String::new(),
            n: 7100,
            c: "two\nlines",
            i,
            w: vec!["x", "a b", ""],
            o: None,
        }
        .render()
    }

    #[test]
    fn every_plain_value_is_one_quoted_word() {
        assert_eq!(
            probe("LD_LIBRARY_PATH").expect("renders"),
            r"A='it'\''s $(id)' B='' N=7100 C=two lines I=LD_LIBRARY_PATH P=${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} W=(x 'a b' '') O=''"
        );
    }

    #[test]
    fn a_bad_variable_name_is_an_error_not_shell() {
        let e = probe("A;rm -rf /").expect_err("refused");
        assert!(
            e.to_string().contains("found env var name `A;rm -rf /`"),
            "{e}"
        );
        assert!(probe("9LIVES").is_err());
    }

    #[test]
    fn wrap_puts_sixteen_words_on_a_line() {
        let items: Vec<u32> = (0..17).collect();
        let out = super::wrapped(&items, 16, 3).expect("wraps").0;
        assert_eq!(out, "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n   16");
    }
}
