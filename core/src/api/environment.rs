//! The environment variables the core and the command line read, each with what it
//! does: one table that `sandalyst --help` prints, so a variable the code reads is
//! never a secret of the source (a test of the command line fails when one is read
//! but not listed here).

/// One variable and what it changes.
#[derive(Clone, Copy, Debug)]
pub struct Variable {
    pub name: &'static str,
    pub meaning: &'static str,
}

const fn var(name: &'static str, meaning: &'static str) -> Variable {
    Variable { name, meaning }
}

/// Where the log files go, instead of the platform's log folder.
pub const LOG_DIR: &str = "SANDALYST_LOG_DIR";
/// What is logged: a filter such as `debug` or `sandalyst=trace,info`.
pub const LOG: &str = "SANDALYST_LOG";

/// Every variable, grouped as the help shows them.
pub const VARIABLES: &[Variable] = &[
    var(
        "SANDALYST_DATA_DIR",
        "where sessions are kept (as --data-dir)",
    ),
    var(
        "SANDALYST_CONFIG",
        "the config file (default: config.toml in the user's config folder)",
    ),
    var("SANDALYST_IMAGE", "the sandbox image to use (as --image)"),
    var(
        "SANDALYST_ISOLATION",
        "what --isolation auto means on this machine: runc or gvisor",
    ),
    var(
        "SANDALYST_STAGING",
        "copy: copy every input instead of bind-mounting large ones",
    ),
    var(
        "SANDALYST_BUILD_DIR",
        "where the offline image build works (about 2 GB; default: the cache folder)",
    ),
    var(
        "SANDALYST_BUILD_CA_FILE",
        "a CA file the package build trusts (as image build --ca-file)",
    ),
    var(
        "SANDALYST_SSH_CONFIG",
        "the ssh config file for an ssh:// engine",
    ),
    var(
        LOG,
        "what is logged, e.g. debug or sandalyst=trace (default: info); also on stderr",
    ),
    var(
        LOG_DIR,
        "where the log files go (default: the platform's log folder)",
    ),
    var(
        "OPENAI_API_KEY",
        "the key for openai: models (else the keychain's)",
    ),
    var("OPENAI_BASE_URL", "another server for openai: models"),
    var(
        "ANTHROPIC_API_KEY",
        "the key for anthropic: models (else the keychain's)",
    ),
    var("ANTHROPIC_BASE_URL", "another server for anthropic: models"),
    var(
        "SANDALYST_COMPATIBLE_API_KEY",
        "the key for an openai-compatible server (or the variable the config file's api_key_env names)",
    ),
    var(
        "OLLAMA_HOST",
        "where ollama: models are served (as Ollama's own CLI reads it)",
    ),
    var(
        "HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY",
        "the proxy for model calls and image builds (lower case too)",
    ),
    var(
        "DOCKER_HOST, DOCKER_CONTEXT, DOCKER_CONFIG",
        "which container engine is used, as the docker CLI reads them",
    ),
    var(
        "XDG_RUNTIME_DIR",
        "where a rootless Podman's socket is looked for",
    ),
];

/// Names longer than this go on a line of their own, the meaning under them.
const WIDTH: usize = 28;

/// The table as the help text's section: a name, then what it does, aligned.
pub fn help_text() -> String {
    let mut s = String::new();
    for v in VARIABLES {
        if v.name.len() > WIDTH {
            s.push_str(&format!("  {}\n  {:WIDTH$}  {}\n", v.name, "", v.meaning));
        } else {
            s.push_str(&format!("  {:<WIDTH$}  {}\n", v.name, v.meaning));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_is_listed_once_with_its_meaning() {
        let mut names: Vec<&str> = VARIABLES.iter().flat_map(|v| v.name.split(", ")).collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all, "a variable is listed twice");
        let text = help_text();
        let lines: Vec<&str> = text.lines().collect();
        for v in VARIABLES {
            assert!(!v.meaning.is_empty());
            let at = lines
                .iter()
                .position(|l| l.trim_start().starts_with(v.name))
                .unwrap();
            // The meaning on the name's line, or on the next for a long name.
            let meaning = [lines[at], lines.get(at + 1).copied().unwrap_or("")];
            assert!(meaning.iter().any(|l| l.ends_with(v.meaning)), "{text}");
        }
    }
}
