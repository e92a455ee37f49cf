//! The core's top-level modules form layers: each may use only the ones below it, so
//! there is no import circle and the bottom ([`sandalyst::protocol`]) depends on
//! nothing. Read from the source (`crate::NAME` paths, unit tests excepted, as they
//! may reach anywhere): a new circle, a use of a higher layer, or a new top-level
//! module that is not placed here fails.

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
        let mut used = BTreeSet::new();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
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

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let all = uses(&src);
    let level = |m: &str| LAYERS.iter().position(|l| *l == m);
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
    for l in LAYERS {
        assert!(all.contains_key(*l), "LAYERS names {l}, which is gone");
    }
    assert!(
        all["protocol"].is_empty(),
        "the bottom uses {:?}",
        all["protocol"]
    );
    assert!(wrong.is_empty(), "layers broken:\n{}", wrong.join("\n"));
}
