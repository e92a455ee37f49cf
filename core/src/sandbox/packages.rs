//! Which Python packages an image holds, read from the image itself.
//!
//! The model is told what is installed (so it does not guess, or burn turns on
//! `ModuleNotFoundError`), and `sandalyst image status` shows the same list. Both come
//! from `importlib.metadata` run inside a sandbox container (the same hardening as any
//! run), never from a list written in this crate, so a user's own `--image` or a
//! derived image is described truly.
//!
//! Listing costs a container exec (about a second with a cold interpreter), so the
//! result is cached in a small JSON file named by the image's id: an id names exactly
//! one content, so the cache can never describe a different image, even when a tag
//! moves. Here: what is read ([`SCRIPT`], [`parse`]), what the model is told
//! ([`describe`]) and the cache; running the script in an image is the backend's
//! (`docker::packages`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::image;

/// Printed by [`SCRIPT`], cached as is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonEnv {
    /// `sys.version`'s first word, e.g. `3.13.5`.
    pub python: String,
    /// Every installed distribution, sorted by name (case-insensitive).
    pub packages: Vec<PythonPackage>,
}

/// One installed distribution, as `importlib.metadata` names it (`scikit-learn`,
/// `odfpy`, `ipython`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonPackage {
    pub name: String,
    pub version: String,
    /// Another installed distribution requires it (a dependency, not something an
    /// analysis imports by name, as a rule).
    #[serde(default)]
    pub dependency: bool,
}

impl PythonEnv {
    /// The version of `name` (compared case-insensitively, `-` and `_` alike).
    pub fn version_of(&self, name: &str) -> Option<&str> {
        let want = normalize(name);
        self.packages
            .iter()
            .find(|p| normalize(&p.name) == want)
            .map(|p| p.version.as_str())
    }
}

fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// Bumped when [`PythonEnv`] or [`SCRIPT`] change, so older cache files are not read.
const CACHE_FORMAT: &str = "v1";

/// Why the package list is not available.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum PackagesError {
    /// This sandbox has no image to ask (the in-memory fake).
    #[error("this sandbox cannot list its Python packages")]
    Unsupported,
    /// The engine, the container or the interpreter failed.
    #[error("listing the Python packages of the sandbox image failed: {0}")]
    Failed(String),
    /// The script ran but printed something else than the expected JSON.
    #[error("the sandbox image's Python package list is not readable: {0}")]
    Invalid(String),
}

/// Runs in the image (`python3 -c`): one JSON line on stdout.
pub const SCRIPT: &str = r#"import importlib.metadata as m, json, re, sys
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
seen, needed = {}, set()
for d in m.distributions():
    name = d.metadata["Name"]
    if name and norm(name) not in seen:
        seen[norm(name)] = {"name": name, "version": d.version}
    for r in d.requires or []:
        if "extra ==" not in r:
            needed.add(norm(re.match(r"[A-Za-z0-9._-]+", r).group(0)))
for k, p in seen.items():
    p["dependency"] = k in needed
print(json.dumps({"python": sys.version.split()[0],
                  "packages": sorted(seen.values(), key=lambda p: p["name"].lower())}))
"#;

/// Parse what [`SCRIPT`] printed.
pub fn parse(stdout: &[u8]) -> Result<PythonEnv, PackagesError> {
    let text = String::from_utf8_lossy(stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .ok_or_else(|| PackagesError::Invalid("it printed nothing".into()))?;
    let env: PythonEnv =
        serde_json::from_str(line.trim()).map_err(|e| PackagesError::Invalid(e.to_string()))?;
    if env.python.is_empty() || env.packages.is_empty() {
        return Err(PackagesError::Invalid(
            "no interpreter version or no package".into(),
        ));
    }
    Ok(env)
}

/// The libraries an analysis imports, in the order the model is told about them, with
/// what each is for where the name does not say it.
const NOTABLE: &[(&str, &str, &str)] = &[
    ("numpy", "numpy", ""),
    ("pandas", "pandas", ""),
    ("scipy", "scipy", ""),
    ("matplotlib", "matplotlib", " (Agg backend)"),
    ("seaborn", "seaborn", ""),
    ("plotly", "plotly", " (interactive charts)"),
    ("statsmodels", "statsmodels", ""),
    ("scikit-learn", "scikit-learn", ""),
    ("polars", "polars", ""),
    ("duckdb", "duckdb", ""),
    ("ipython", "IPython", ""),
];

/// What pandas can do with the readers and writers it finds installed, said as what it
/// does, not as modules: a small model told "odfpy" imports `odfpy` (which is not its
/// module name), and told a dozen names it imports them all.
const PANDAS_FORMATS: &[(&str, &str)] = &[
    ("pyarrow", "Parquet"),
    ("openpyxl", "Excel .xlsx"),
    ("xlrd", ".xls"),
    ("odfpy", "OpenDocument .ods"),
];

/// The sentence of the instructions that says what is installed, e.g. "Python 3.13.5
/// with numpy 2.2.4, pandas 2.2.3, ... and IPython 8.35.0; pandas reads and writes
/// Parquet, Excel .xlsx, .xls and OpenDocument .ods files". Only the analysis
/// libraries of [`NOTABLE`] are named: a list of every distribution (Brotli, fs,
/// jaraco.text, ...) made small models import what they did not need.
pub fn describe(env: &PythonEnv) -> String {
    let named: Vec<String> = NOTABLE
        .iter()
        .filter_map(|(dist, shown, note)| {
            env.version_of(dist)
                .map(|v| format!("{shown} {}{note}", upstream(v)))
        })
        .collect();
    let mut s = format!("Python {}", env.python);
    if !named.is_empty() {
        s.push_str(&format!(" with {}", and_list(&named)));
    }
    let formats: Vec<String> = PANDAS_FORMATS
        .iter()
        .filter(|(dist, _)| env.version_of(dist).is_some())
        .map(|(_, what)| what.to_string())
        .collect();
    if !formats.is_empty() && env.version_of("pandas").is_some() {
        s.push_str(&format!(
            "; pandas reads and writes {} files",
            and_list(&formats)
        ));
        if env.version_of("tabulate").is_some() {
            s.push_str(", and DataFrame.to_markdown works");
        }
    }
    s
}

fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A version without its local part: Debian's "2.2.3+dfsg" is pandas 2.2.3.
fn upstream(version: &str) -> &str {
    version.split('+').next().unwrap_or(version)
}

/// Where the list of the image with id `image_id` is cached.
fn cache_path(image_id: &str) -> PathBuf {
    let id = image_id.trim_start_matches("sha256:");
    let safe: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(64)
        .collect();
    image::cache_dir()
        .join("python-packages")
        .join(format!("{CACHE_FORMAT}-{safe}.json"))
}

/// The cached list of this image, if any (a damaged file counts as none).
pub(crate) async fn cached(image_id: &str) -> Option<PythonEnv> {
    let bytes = tokio::fs::read(cache_path(image_id)).await.ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Cache the list of this image; a failure only costs a later exec.
pub(crate) async fn store(image_id: &str, env: &PythonEnv) {
    let path = cache_path(image_id);
    let Ok(json) = serde_json::to_vec(env) else {
        return;
    };
    let Some(dir) = path.parent() else { return };
    if tokio::fs::create_dir_all(dir).await.is_err() {
        return;
    }
    // Written aside then renamed: a concurrent reader never sees half a file.
    let partial = path.with_extension(format!("{}.partial", std::process::id()));
    if tokio::fs::write(&partial, json).await.is_ok()
        && tokio::fs::rename(&partial, &path).await.is_err()
    {
        let _ = tokio::fs::remove_file(&partial).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pkgs: &[(&str, &str, bool)]) -> PythonEnv {
        PythonEnv {
            python: "3.13.5".into(),
            packages: pkgs
                .iter()
                .map(|(n, v, dependency)| PythonPackage {
                    name: n.to_string(),
                    version: v.to_string(),
                    dependency: *dependency,
                })
                .collect(),
        }
    }

    #[test]
    fn parses_the_script_output_and_refuses_anything_else() {
        let out = br#"{"python": "3.13.5", "packages": [{"name": "numpy", "version": "2.2.4"}]}
"#;
        let e = parse(out).unwrap();
        assert_eq!(e.python, "3.13.5");
        assert_eq!(e.version_of("NumPy"), Some("2.2.4"));
        assert!(matches!(parse(b""), Err(PackagesError::Invalid(_))));
        assert!(matches!(
            parse(b"Traceback ..."),
            Err(PackagesError::Invalid(_))
        ));
        assert!(matches!(
            parse(br#"{"python": "3.13.5", "packages": []}"#),
            Err(PackagesError::Invalid(_))
        ));
    }

    #[test]
    fn describe_names_the_notable_libraries_first_with_versions() {
        let e = env(&[
            ("ipython", "8.35.0", false),
            ("numpy", "2.2.4", true),
            ("odfpy", "1.4.2", false),
            ("pandas", "2.2.3+dfsg", true),
            ("plotly", "5.20.0+dfsg", false),
            ("python-dateutil", "2.9.0", true),
            ("scikit-learn", "1.4.2", false),
            ("sympy", "1.13.3", false),
            ("types-pytz", "2025.1", false),
        ]);
        assert_eq!(
            describe(&e),
            "Python 3.13.5 with numpy 2.2.4, pandas 2.2.3, plotly 5.20.0 (interactive charts), \
             scikit-learn 1.4.2 and IPython 8.35.0; \
             pandas reads and writes OpenDocument .ods files"
        );
        assert_eq!(
            describe(&env(&[("requests", "2.32", false)])),
            "Python 3.13.5"
        );
    }

    #[test]
    fn the_cache_file_name_is_the_id_and_nothing_else() {
        let p = cache_path("sha256:ab/../cd");
        assert_eq!(p.file_name().unwrap(), "v1-abcd.json");
        assert!(p.parent().unwrap().ends_with("python-packages"));
    }
}
