//! What `auto` learned about each model's calls (`call-modes.json` beside the
//! sessions): a local server whose model wrote no native calls moved to schema steps,
//! and the next session of the same model starts there instead of spending its first
//! reply (minutes on a laptop's CPU) learning it again. A cache: unreadable or lost,
//! it is learned anew; two processes writing it leave one whole file.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::conversation::CallMode;

const FILE: &str = "call-modes.json";
/// Models remembered at most: the oldest are forgotten first.
const MAX_MODELS: usize = 64;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Learned {
    pub mode: CallMode,
    /// When it was learned (RFC 3339).
    pub at: String,
}

/// The mode learned for `model` (the model's own description: provider, name and
/// server), if any.
pub fn learned(root: &Path, model: &str) -> Option<Learned> {
    read(root).remove(model)
}

/// Keep `mode` as what `auto` learned for `model`.
pub fn learn(root: &Path, model: &str, mode: CallMode) -> std::io::Result<()> {
    let mut all = read(root);
    all.insert(
        model.to_string(),
        Learned {
            mode,
            at: chrono::Utc::now().to_rfc3339(),
        },
    );
    while all.len() > MAX_MODELS {
        let oldest = all
            .iter()
            .min_by(|a, b| a.1.at.cmp(&b.1.at))
            .map(|(k, _)| k.clone());
        match oldest {
            Some(k) => all.remove(&k),
            None => break,
        };
    }
    let bytes = serde_json::to_vec_pretty(&all).map_err(std::io::Error::other)?;
    super::atomic::write_atomic(&root.join(FILE), &bytes)
}

fn read(root: &Path) -> BTreeMap<String, Learned> {
    std::fs::read(root.join(FILE))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_learned_mode_is_kept_per_model_and_a_broken_file_is_learned_anew() {
        let dir = tempfile::tempdir().unwrap();
        let m = "openai-compatible:qwen (Chat Completions at http://127.0.0.1:8091/v1)";
        assert_eq!(learned(dir.path(), m), None);
        learn(dir.path(), m, CallMode::Schema).unwrap();
        assert_eq!(learned(dir.path(), m).unwrap().mode, CallMode::Schema);
        assert_eq!(learned(dir.path(), "another model"), None);
        for i in 0..MAX_MODELS + 5 {
            learn(dir.path(), &format!("model {i}"), CallMode::Text).unwrap();
        }
        assert_eq!(read(dir.path()).len(), MAX_MODELS);
        assert_eq!(
            learned(dir.path(), &format!("model {}", MAX_MODELS + 4))
                .unwrap()
                .mode,
            CallMode::Text
        );
        std::fs::write(dir.path().join(FILE), "{not json").unwrap();
        assert_eq!(learned(dir.path(), m), None);
        learn(dir.path(), m, CallMode::Schema).unwrap();
        assert_eq!(learned(dir.path(), m).unwrap().mode, CallMode::Schema);
    }
}
