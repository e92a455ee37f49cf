//! The words the analyst writes, per skill and language (`texts.toml`, embedded): the
//! Python scripts get their skill's table as `T`, the planner's own sentences (a
//! plan's parts, the decline) are read here. The words it reads are the lexicon's.

use std::sync::LazyLock;

use serde_json::Value;

use super::request::Lang;

/// `texts.toml`, parsed once.
static TEXTS: LazyLock<toml::Table> = LazyLock::new(|| {
    toml::from_str(include_str!("texts.toml"))
        .unwrap_or_else(|e| panic!("core/src/analyst/texts.toml does not parse: {e}"))
});

/// Where a script takes its table: `__SANDALYST_TEXTS__("stats")` becomes a Python
/// string literal of that skill's words in every language (the script picks `[LANG]`).
const MARKER: &str = "__SANDALYST_TEXTS__(\"";

/// `code` with each texts marker replaced by its section as a JSON string literal
/// (ASCII only, by `ascii`); an unknown section is a bug of the template.
pub(super) fn substituted(code: &str, ascii: impl Fn(&Value) -> String) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(MARKER) {
        out.push_str(&rest[..at]);
        let after = &rest[at + MARKER.len()..];
        let end = after.find("\")").expect("a texts marker is closed");
        let name = &after[..end];
        let section = TEXTS
            .get(name)
            .unwrap_or_else(|| panic!("texts.toml has no [{name}]"));
        let json = serde_json::to_value(section).expect("texts are JSON");
        out.push_str(&serde_json::to_string(&ascii(&json)).expect("a string serialises"));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// One text of the planner's own (`[plan.en]`, `[plan.es]`): `key` may name a table's
/// entry as `table.entry` ("stat.mean"). A missing key is a bug of `texts.toml`: a
/// debug build (the tests) stops on it, a release build reads it as empty.
pub(super) fn plan(lang: Lang, key: &str) -> &'static str {
    let lang = lang.pick("en", "es");
    let mut node = TEXTS.get("plan").and_then(|p| p.get(lang));
    for part in key.split('.') {
        node = node.and_then(|n| n.get(part));
    }
    node.and_then(toml::Value::as_str).unwrap_or_else(|| {
        debug_assert!(false, "texts.toml has no plan.{lang}.{key}");
        ""
    })
}

/// A section's table of `lang` as a typed struct (a missing key fails at first use,
/// and a test reads every section's keys in every language alike).
pub(super) fn typed<T: serde::de::DeserializeOwned>(section: &str, lang: Lang) -> T {
    let lang = lang.pick("en", "es");
    let table = TEXTS
        .get(section)
        .and_then(|s| s.get(lang))
        .unwrap_or_else(|| panic!("texts.toml has no [{section}.{lang}]"));
    table
        .clone()
        .try_into()
        .unwrap_or_else(|e| panic!("texts.toml [{section}.{lang}]: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text of a language, by its path (`.dir.spike`, `.found[1]`).
    fn leaves(v: &toml::Value, at: String, out: &mut Vec<(String, String)>) {
        match v {
            toml::Value::Table(t) => t
                .iter()
                .for_each(|(k, v)| leaves(v, format!("{at}.{k}"), out)),
            toml::Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    leaves(v, format!("{at}[{i}]"), out);
                }
            }
            v => out.push((at, v.as_str().unwrap_or_default().to_string())),
        }
    }

    /// The places for values a text has: `{}` and `{name}` exactly; of the `%`
    /// conversions those of numbers (a language may add a `%s` for agreement).
    fn places(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find(['{', '%']) {
            let tail = &rest[at..];
            let len = if tail.starts_with('{') {
                tail.find('}').map_or(1, |e| e + 1)
            } else {
                1 + tail[1..]
                    .find(|c: char| c.is_ascii_alphabetic() || c == '%')
                    .map_or(0, |e| e + 1)
            };
            let place = &tail[..len];
            if !(place.starts_with('%') && (place.ends_with('s') || place == "%%")) {
                out.push(place.to_string());
            }
            rest = &tail[len..];
        }
        out.sort();
        out
    }

    #[test]
    fn every_language_has_the_same_texts_with_the_same_places_for_values() {
        for (name, section) in TEXTS.iter() {
            let langs = section
                .as_table()
                .expect("a section is a table of languages");
            let mut en = Vec::new();
            leaves(&langs["en"], String::new(), &mut en);
            for (lang, words) in langs {
                let mut these = Vec::new();
                leaves(words, String::new(), &mut these);
                let keys =
                    |v: &[(String, String)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
                assert_eq!(
                    keys(&en),
                    keys(&these),
                    "[{name}.{lang}] has other texts than [{name}.en]"
                );
                for ((key, a), (_, b)) in en.iter().zip(&these) {
                    assert_eq!(
                        places(a),
                        places(b),
                        "[{name}.{lang}]{key}: other places for values"
                    );
                }
            }
        }
        assert_eq!(
            places("%d of %s, %.1f %% {} {understood}"),
            ["%.1f", "%d", "{understood}", "{}"]
        );
    }

    #[test]
    fn a_marker_becomes_its_section() {
        let code = substituted(
            "T = json.loads(__SANDALYST_TEXTS__(\"profile\"))[LANG]",
            |v| v.to_string(),
        );
        assert!(code.starts_with("T = json.loads(\"{"), "{code}");
        assert!(code.ends_with("\")[LANG]"), "{code}");
        assert!(code.contains("Perfil de los datos"));
        assert_eq!(plan(Lang::Es, "stat.median"), "mediana");
    }

    #[test]
    fn every_statistic_the_lexicon_reads_is_one_with_a_name_in_every_language() {
        let lexicon = &crate::analyst::lexicon::LEXICON;
        for (_, code) in lexicon.statistics.iter() {
            let stat = crate::analyst::stat_plan::StatName::of_code(code);
            assert_eq!(stat.code(), *code);
            for lang in [Lang::En, Lang::Es] {
                assert!(!plan(lang, &format!("stat.{code}")).is_empty(), "{code}");
            }
        }
    }
}
