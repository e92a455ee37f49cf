//! The core compiles off Linux by construction: every Unix-only API in `core/src` sits
//! under a `cfg(unix)` (or `cfg(target_os = "linux")`) guard. A Windows standard
//! library for this toolchain cannot be fetched here (no rustup server), so instead of
//! `cargo check --target x86_64-pc-windows-gnu` this test finds the Unix-only spots
//! and fails on one without a guard just above it.

use std::path::Path;

const UNIX_ONLY: &[&str] = &[
    "std::os::unix",
    "os::unix::",
    "std::os::linux",
    "libc::",
    "signal::unix",
    "UnixStream",
    "UnixListener",
];
const GUARDS: &[&str] = &[
    "cfg(unix)",
    "cfg(target_os = \"linux\")",
    "cfg(not(windows))",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_unix_only_spot_in_the_core_is_guarded() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let (mut spots, mut unguarded) = (Vec::new(), Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim_start().starts_with("//") || !UNIX_ONLY.iter().any(|u| line.contains(u)) {
                continue;
            }
            let place = format!("{}:{}", f.strip_prefix(&src).unwrap().display(), i + 1);
            // Guarded just above, or the whole top-level item is (its attributes).
            let near = &lines[i.saturating_sub(4)..i];
            let mut start = i;
            while start > 0 && (lines[start].starts_with(' ') || lines[start].is_empty()) {
                start -= 1;
            }
            let mut attrs = start;
            while attrs > 0 && lines[attrs - 1].starts_with("#[") {
                attrs -= 1;
            }
            let item = &lines[attrs..=start];
            let guarded = |ls: &[&str]| ls.iter().any(|l| GUARDS.iter().any(|g| l.contains(g)));
            if guarded(near) || guarded(item) {
                spots.push(place);
            } else {
                unguarded.push(format!("{place}: {}", line.trim()));
            }
        }
    }
    eprintln!("guarded Unix-only spots: {spots:?}");
    assert!(
        unguarded.is_empty(),
        "Unix-only code without a cfg(unix) guard (the crate would not compile for Windows):\n{}",
        unguarded.join("\n")
    );
}
