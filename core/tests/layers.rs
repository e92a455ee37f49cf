//! The core's top-level modules form layers: each may use only the ones below it, so
//! there is no import circle and the bottom ([`sandalyst::protocol`]) depends on
//! nothing. Read from the source (`crate::NAME` paths) of the whole of every file:
//! only test code is left out, as it may reach anywhere: a test module in a file of its
//! own (`#[cfg(test)] mod tests;`, excepted by its path) and any item under
//! `#[cfg(test)]` (cut out through its closing brace, wherever it stands in the file).
//! A new circle, a use of a higher layer, or a new top-level module that is not
//! placed here fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom first. A module may use any module before it.
const LAYERS: &[&str] = &[
    "protocol",     // shared types: run status, typed errors, tool sources
    "conversation", // the Model trait and the conversation's items, usage, prices
    "owner",        // which process owns what
    "approval",     // which calls wait for the analyst, and the answers
    "egress",       // the network modes and the egress proxy
    "terminal",     // text safe for a terminal
    "artifacts",    // previews of outputs
    "explore",      // the data explorer: views, summaries, pandas code of a table
    "analyst",      // the offline analyst (rule-based, not an LLM), a Model
    "model",        // the providers, and which one a run uses
    "workspace",    // what goes in, what comes out
    "store",        // session history on disk
    "sandbox",      // the Sandbox trait and its engines
    "agent",        // the loop
    "session",      // a conversation: one sandbox, one workspace, many asks
    "analysis",     // a session's executed code: cells, a notebook, a script
    "run",          // one ask in a new session
    "rerun",        // a session's calls again on new inputs
    "api",          // the one API every front end calls
];

const CFG_TEST: &str = "#[cfg(test)]";

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Where the module `name` declared in `file` lives: beside it for a `mod.rs` or
/// `lib.rs`, else in the folder named after `file`; `NAME.rs` or `NAME/mod.rs`.
fn module_files(file: &Path, name: &str) -> [PathBuf; 2] {
    let dir = file.parent().unwrap();
    let stem = file.file_stem().unwrap();
    let base = if stem == "mod" || stem == "lib" {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    [
        base.join(format!("{name}.rs")),
        base.join(name).join("mod.rs"),
    ]
}

/// The byte after the end of the item that starts at `at`: its closing brace (braces
/// in strings, characters and comments do not count) or, for an item without a body
/// (`mod tests;`, `use ...;`), its semicolon; for an attribute (`#[...]`), its bracket.
fn item_end(code: &str, at: usize) -> usize {
    let b = code.as_bytes();
    let attribute = code[at..].starts_with("#[");
    let mut i = at;
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = code[i..].find('\n').map_or(b.len(), |n| i + n);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = code[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                continue;
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = code[i + 1..].bytes().take_while(|c| *c == b'#').count();
                if b.get(i + 1 + hashes) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let from = i + 2 + hashes;
                    i = code[from..]
                        .find(&close)
                        .map_or(b.len(), |n| from + n + close.len());
                    continue;
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            // A character literal ('{', '\'', '\u{7b}'); a lifetime ('a) has no closing quote.
            b'\'' => {
                if b.get(i + 1) == Some(&b'\\') {
                    // The escaped character itself may be a quote: the end is after it.
                    i = code[i + 3..].find('\'').map_or(b.len(), |n| i + 3 + n);
                } else if let Some(c) = code[i + 1..].chars().next() {
                    if code[i + 1 + c.len_utf8()..].starts_with('\'') {
                        i += c.len_utf8() + 1;
                    }
                }
            }
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && (b[i] == b'}' || (attribute && b[i] == b']')) {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// `text` without its test-only items, and the names of the test modules it declares
/// with `#[cfg(test)] mod NAME;` (their files are test code as a whole).
fn without_tests(text: &str) -> (String, Vec<String>) {
    let mut code = String::new();
    let mut modules = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(CFG_TEST) {
        code.push_str(&rest[..at]);
        let mut item = at + CFG_TEST.len();
        // Other attributes of the same item (`#[cfg(unix)]`, `#[test]`) go with it.
        loop {
            let next = rest[item..].trim_start();
            item = rest.len() - next.len();
            if !next.starts_with("#[") {
                break;
            }
            item = item_end(rest, item);
        }
        let end = item_end(rest, item);
        let declared = rest[item..end].trim();
        if let Some(name) = declared
            .strip_prefix("mod ")
            .and_then(|d| d.strip_suffix(';'))
        {
            modules.push(name.trim().to_string());
        }
        rest = &rest[end..];
    }
    code.push_str(rest);
    (code, modules)
}

/// The top-level modules each module's code names through `crate::`.
fn uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut all = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib"
            || name == "bin"
            || (path.is_file() && path.extension().is_none_or(|x| x != "rs"))
        {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path.clone());
        }
        let mut read = BTreeMap::new();
        let mut test_files = BTreeSet::new();
        for f in &files {
            let (code, modules) = without_tests(&std::fs::read_to_string(f).unwrap());
            for m in modules {
                test_files.extend(module_files(f, &m));
            }
            read.insert(f.clone(), code);
        }
        let mut used = BTreeSet::new();
        for (f, code) in &read {
            if test_files.contains(f) {
                continue;
            }
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                let target: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                assert!(
                    !rest.starts_with('{'),
                    "{}: `crate::{{...}}` hides which modules it uses; name each path",
                    f.display()
                );
                if !target.is_empty() && target != name {
                    used.insert(target);
                }
            }
        }
        all.insert(name, used);
    }
    all
}

/// What breaks the layers of the modules under `src`: a module that uses one not
/// below it, a module not placed in `layers`, a placed one that is gone.
fn broken(src: &Path, layers: &[&str]) -> Vec<String> {
    let all = uses(src);
    let level = |m: &str| layers.iter().position(|l| *l == m);
    let mut wrong = Vec::new();
    for (module, used) in &all {
        let Some(at) = level(module) else {
            wrong.push(format!(
                "{module} is a new top-level module: place it in LAYERS"
            ));
            continue;
        };
        for u in used {
            match level(u) {
                Some(l) if l < at => {}
                Some(_) => wrong.push(format!("{module} uses {u}, which is not below it")),
                None => {} // a name that is not a module of ours (e.g. a macro path)
            }
        }
    }
    for l in layers {
        if !all.contains_key(*l) {
            wrong.push(format!("LAYERS names {l}, which is gone"));
        }
    }
    if all.get(layers[0]).is_some_and(|u| !u.is_empty()) {
        wrong.push(format!("the bottom uses {:?}", all[layers[0]]));
    }
    wrong
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let wrong = broken(&src, LAYERS);
    assert!(wrong.is_empty(), "layers broken:\n{}", wrong.join("\n"));
}

/// The check itself, on a small tree of its own: a use of a higher layer anywhere in
/// a file is caught (after a `#[cfg(test)] mod tests;` at its top, after an inline
/// test module whose strings hold braces); test code is not.
#[test]
fn the_layer_check_reads_the_whole_of_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    let layers = ["bottom", "agent", "api"];
    write("lib.rs", "pub mod bottom; pub mod agent; pub mod api;");
    write("bottom.rs", "pub struct Item;\n");
    write(
        "api/mod.rs",
        "pub use crate::agent::run;\npub struct App;\n",
    );
    // The loop's own file: its tests declared at the top, the code below them.
    write(
        "agent/mod.rs",
        "#[cfg(test)]\nmod tests;\n\npub fn run() -> crate::bottom::Item { crate::bottom::Item }\n",
    );
    write("agent/tests.rs", "use crate::api::App;\n");
    write(
        "agent/tools.rs",
        "#[cfg(test)]\n#[cfg(unix)]\nfn helper() -> char { '}' }\n\
         #[cfg(test)]\nmod tests {\n    const S: &str = \"}}\";\n    const R: &str = r#\"{\"#;\n    const Q: char = '\\'';\n    \
         fn f<'a>(x: &'a str) -> &'a str { x }\n    use crate::api::App;\n}\n\
         pub fn tool() {}\n",
    );
    assert_eq!(broken(src, &layers), Vec::<String>::new());

    // A line inside the loop's file that reaches up, below its test module's line.
    write(
        "agent/mod.rs",
        "#[cfg(test)]\nmod tests;\n\nuse crate::api::App;\npub fn run() {}\n",
    );
    assert_eq!(
        broken(src, &layers),
        ["agent uses api, which is not below it"]
    );

    // The same after an inline test module whose strings and characters hold braces.
    write(
        "agent/mod.rs",
        "#[cfg(test)]\nmod tests;\npub fn run() {}\n",
    );
    write(
        "agent/tools.rs",
        "#[cfg(test)]\nmod tests {\n    const S: &str = \"}}\";\n    const C: char = '{';\n}\n\
         pub fn tool() -> crate::api::App { todo!() }\n",
    );
    assert_eq!(
        broken(src, &layers),
        ["agent uses api, which is not below it"]
    );

    // A test file of another module is not excepted for having the name `tests.rs`.
    write("agent/tools.rs", "pub fn tool() {}\n");
    write("agent/more/tests.rs", "use crate::api::App;\n");
    assert_eq!(
        broken(src, &layers),
        ["agent uses api, which is not below it"]
    );
}

/// The loop makes no cancel token of its own: every wait in it (the model, the code,
/// the summary turn after a limit) ends with the ask's own Stop. Read from the whole
/// of its files, test code left out.
#[test]
fn the_loop_makes_no_cancel_token_of_its_own() {
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/agent");
    let mut files = Vec::new();
    rust_files(&agent, &mut files);
    let mut read = BTreeMap::new();
    let mut test_files = BTreeSet::new();
    for f in &files {
        let (code, modules) = without_tests(&std::fs::read_to_string(f).unwrap());
        for m in modules {
            test_files.extend(module_files(f, &m));
        }
        read.insert(f.clone(), code);
    }
    let fresh: Vec<String> = read
        .iter()
        .filter(|(f, code)| !test_files.contains(*f) && code.contains("CancellationToken::new"))
        .map(|(f, _)| f.display().to_string())
        .collect();
    assert!(fresh.is_empty(), "a token of its own in {fresh:?}");
    // The check sees the loop's tests, which do make tokens, as test code.
    assert!(test_files.contains(&agent.join("tests.rs")));
}
