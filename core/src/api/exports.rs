//! What leaves the app: a session's outputs (with its transcript and its analysis as a
//! notebook and a script, when asked) as a new folder or `.zip`, a whole session
//! folder copied, the analysis alone written into a folder, or one file saved where
//! the person chose.

use std::path::{Path, PathBuf};

use super::{blocking, App, Error};
use crate::artifacts::bundle;
use crate::store::{META, OUTPUTS, TRANSCRIPT};

/// What goes with the outputs.
#[derive(Clone, Copy, Debug, Default)]
pub struct OutputsExport {
    /// A new `.zip` file instead of a new folder.
    pub zip: bool,
    /// `transcript.jsonl` and `run.json` too.
    pub transcript: bool,
    /// The executed cells as `analysis.ipynb` and `analysis.py` too.
    pub analysis: bool,
}

pub use crate::analysis::Formats;

impl App {
    /// Copy session `id`'s outputs (and what `what` adds) to `dest`, a new folder or a
    /// new `.zip`; returns what was written.
    pub async fn export_outputs(
        &self,
        id: &str,
        dest: PathBuf,
        what: OutputsExport,
    ) -> Result<PathBuf, Error> {
        let root = self.dir_of(id)?;
        let run = self.run_dir(id)?;
        blocking(move || {
            let mut files = bundle::files_under(&root.join(OUTPUTS))?;
            if what.transcript {
                for name in [TRANSCRIPT, META] {
                    let p = root.join(name);
                    if p.is_file() {
                        files.push((name.to_string(), p));
                    }
                }
            }
            if what.analysis {
                // Written in the session's folder and exported with the outputs.
                let dir = root.join("analysis");
                std::fs::create_dir_all(&dir)?;
                let nb = dir.join("analysis.ipynb");
                std::fs::write(
                    &nb,
                    serde_json::to_string_pretty(&crate::analysis::notebook::build(&run)?)?,
                )?;
                let py = dir.join("analysis.py");
                std::fs::write(&py, crate::analysis::script::build(&run)?)?;
                files.push(("analysis.ipynb".to_string(), nb));
                files.push(("analysis.py".to_string(), py));
            }
            if files.is_empty() {
                anyhow::bail!("this session has no outputs yet");
            }
            if what.zip {
                bundle::to_zip(&files, &dest)
            } else {
                bundle::to_folder(&files, &dest)
            }
        })
        .await
    }

    /// Copy the whole session folder (metadata, transcript, outputs, workspace archive)
    /// into `dir/<id>`; returns the new folder.
    pub async fn copy_session(&self, id: &str, dir: PathBuf) -> Result<PathBuf, Error> {
        let run = self.run_dir(id)?;
        blocking(move || run.copy_to(&dir)).await
    }

    /// Write session `id`'s analysis into `dir` (`analysis.ipynb`, `analysis.py`, the
    /// inputs in `dir/input/`); returns the files written.
    pub async fn export_analysis(
        &self,
        id: &str,
        dir: PathBuf,
        formats: Formats,
    ) -> Result<Vec<PathBuf>, Error> {
        let run = self.run_dir(id)?;
        blocking(move || crate::analysis::to_folder(&run, &dir, formats)).await
    }

    /// Copy one file of session `id` (`path` relative to its folder, e.g. a chart in
    /// `outputs/`) to `dest`, which the person chose in a save dialog (that dialog
    /// asked before replacing a file). Returns what was written.
    pub async fn save_file(&self, id: &str, path: &str, dest: PathBuf) -> Result<PathBuf, Error> {
        absolute(&dest)?;
        let file =
            super::files::resolve_inside(&self.dir_of(id)?, path).map_err(anyhow::Error::from)?;
        blocking(move || {
            std::fs::copy(&file, &dest)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", dest.display()))?;
            Ok(dest)
        })
        .await
    }

    /// Session `id`'s folder as stored, for reading.
    fn run_dir(&self, id: &str) -> Result<crate::store::RunDir, Error> {
        let store = crate::store::Store::open(self.root().to_path_buf())?;
        Ok(store.open_run(id)?)
    }
}

/// A relative destination is refused: a front end passes what its dialog chose.
pub fn absolute(dest: &Path) -> Result<(), Error> {
    if dest.is_absolute() {
        Ok(())
    } else {
        Err(Error::bad_input("pick a destination with the dialog"))
    }
}
