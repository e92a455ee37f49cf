//! Files handed to the app when it starts: paths or `file://` URIs on its command line
//! (a file manager's "Open with", the `.desktop` file's `%F`/`%U`), or a second
//! launch's, forwarded to the running window. Each is made absolute against the
//! working directory of the launch that gave it and checked to exist, so the window
//! can say which ones are missing; what kind of file it is, is `add_files`'s check.
//!
//! Also the name one running app is known by ([`instance_name`]): one per data folder,
//! so a second launch with the same history hands its files over, while an app with
//! another `SANDALYST_DATA_DIR` (a test's, a second profile) runs on its own.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

/// At most this many arguments of one launch are read (a file manager passes one per
/// selected file; the rest are named as left out).
pub const MAX_ARGS: usize = 1000;

/// What one launch's arguments give: the files to open and, in words for the window,
/// the arguments that are not files that exist.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LaunchFiles {
    pub paths: Vec<PathBuf>,
    pub problems: Vec<String>,
}

impl LaunchFiles {
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.problems.is_empty()
    }
}

/// The files of a launch's arguments (without the program's own name, `argv[0]`),
/// relative ones taken from `cwd`. Arguments starting with `-` are options, not read.
pub fn files_from_args<I, S>(args: I, cwd: &Path) -> LaunchFiles
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = LaunchFiles::default();
    let mut count = 0usize;
    for arg in args {
        let arg = arg.as_ref();
        if arg.is_empty() || arg.starts_with('-') {
            continue;
        }
        count += 1;
        if count > MAX_ARGS {
            continue;
        }
        match path_of(arg, cwd) {
            Ok(p) => match std::fs::metadata(&p) {
                Ok(_) => out.paths.push(p),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    out.problems.push(format!("{}: no such file", p.display()))
                }
                Err(e) => out.problems.push(format!("{}: {e}", p.display())),
            },
            Err(why) => out.problems.push(why),
        }
    }
    if count > MAX_ARGS {
        out.problems.push(format!(
            "{} more files were given than the {MAX_ARGS} one launch opens; they were left out",
            count - MAX_ARGS
        ));
    }
    out
}

/// An argument as an absolute path: a `file://` URI (`%U`) decoded, a relative path
/// joined to `cwd`, `.` and `..` parts resolved by name (the file may not exist).
fn path_of(arg: &str, cwd: &Path) -> Result<PathBuf, String> {
    if arg.contains('\0') {
        return Err("an argument holds a NUL byte".into());
    }
    let raw = if let Some(rest) = strip_prefix_ci(arg, "file://") {
        // file:///abs/path or file://localhost/abs/path; another host is not this machine.
        let path = if rest.starts_with('/') {
            rest
        } else if let Some(p) = strip_prefix_ci(rest, "localhost/") {
            &rest[rest.len() - p.len() - 1..]
        } else {
            return Err(format!("{arg}: only files of this computer can be opened"));
        };
        let decoded = percent_encoding::percent_decode_str(path)
            .decode_utf8()
            .map_err(|_| format!("{arg}: the address is not valid UTF-8"))?;
        PathBuf::from(decoded.as_ref())
    } else if arg.contains("://") {
        return Err(format!("{arg}: only files can be opened, not addresses"));
    } else {
        PathBuf::from(arg)
    };
    let joined = if raw.is_absolute() {
        raw
    } else {
        cwd.join(raw)
    };
    Ok(normalise(&joined))
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// `a/./b/../c` as `a/c`, by name only (no link is followed: the file manager named
/// the path the analyst sees).
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The name the app running on the data folder `root` is known by to a second launch
/// (on Linux a D-Bus name): `identifier` and a hash of the folder's path, so two data
/// folders are two apps. Stable across builds (FNV-1a, not the std hasher).
pub fn instance_name(identifier: &str, root: &Path) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in root.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // A D-Bus name element must not start with a digit: `d` (for data folder) first.
    format!("{identifier}.d{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_uris_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a b.csv");
        std::fs::write(&a, "x\n1\n").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let uri = format!("file://{}", dir.path().join("a%20b.csv").display());
        let local = format!("file://localhost{}", dir.path().join("a%20b.csv").display());
        let got = files_from_args(
            [
                "a b.csv",
                "./sub/../a b.csv",
                "--ignored-option",
                &uri,
                &local,
                "missing.csv",
                "sub",
                "https://example.com/x.csv",
                "file://otherhost/x.csv",
            ],
            dir.path(),
        );
        assert_eq!(
            got.paths,
            vec![a.clone(), a.clone(), a.clone(), a, dir.path().join("sub")]
        );
        assert_eq!(
            got.problems,
            vec![
                format!("{}: no such file", dir.path().join("missing.csv").display()),
                "https://example.com/x.csv: only files can be opened, not addresses".to_string(),
                "file://otherhost/x.csv: only files of this computer can be opened".to_string(),
            ]
        );
    }

    #[test]
    fn no_arguments_nothing_to_open() {
        let got = files_from_args(Vec::<String>::new(), Path::new("/"));
        assert!(got.is_empty());
    }

    #[test]
    fn too_many_arguments_are_said() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f.csv");
        std::fs::write(&f, "x\n").unwrap();
        let args = vec![f.display().to_string(); MAX_ARGS + 3];
        let got = files_from_args(&args, dir.path());
        assert_eq!(got.paths.len(), MAX_ARGS);
        assert_eq!(got.problems.len(), 1);
        assert!(
            got.problems[0].starts_with("3 more files"),
            "{:?}",
            got.problems
        );
    }

    #[test]
    fn one_instance_per_data_folder() {
        let a = instance_name(
            "dev.sandalyst.desktop",
            Path::new("/home/a/.local/share/sandalyst"),
        );
        let b = instance_name("dev.sandalyst.desktop", Path::new("/tmp/test-data"));
        assert_ne!(a, b);
        assert_eq!(
            a,
            instance_name(
                "dev.sandalyst.desktop",
                Path::new("/home/a/.local/share/sandalyst")
            )
        );
        // A valid D-Bus name: elements of [A-Za-z0-9_-], none starting with a digit.
        for part in a.split('.') {
            assert!(
                !part.is_empty() && !part.as_bytes()[0].is_ascii_digit(),
                "{a}"
            );
            assert!(part
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-'));
        }
    }
}
