//! What leaves the app: a session's outputs (with its transcript and its analysis as a
//! notebook and a script, when asked) as a new folder or `.zip`, a whole session
//! folder copied, the analysis alone written into a folder, the session as one HTML
//! report to share, or one file saved where the person chose.

use std::path::{Path, PathBuf};

use super::{blocking, App, Error, SessionId};
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

/// What an export wrote, and what the person should know about it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Exported {
    pub path: PathBuf,
    /// One sentence per exported table with cells a spreadsheet would run as formulas.
    pub notes: Vec<String>,
}

/// Tables larger than this are not scanned for formula-like cells on export.
const MAX_FORMULA_SCAN_BYTES: u64 = 256 << 20;

/// A sentence for each CSV/TSV of `files` with cells that start like a formula (`=`,
/// `+`, `-`, `@`; plain numbers aside): opened in a spreadsheet, they would run.
fn formula_notes(files: &[(String, PathBuf)]) -> Vec<String> {
    let mut notes = Vec::new();
    for (name, path) in files {
        let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
        let delimiter = match ext.as_str() {
            "csv" => None,
            "tsv" => Some(b'\t'),
            _ => continue,
        };
        if std::fs::metadata(path).map_or(true, |m| m.len() > MAX_FORMULA_SCAN_BYTES) {
            continue;
        }
        let Ok(n) = formula_cells(path, delimiter) else {
            continue;
        };
        if n > 0 {
            notes.push(format!(
                "{name}: {n} cell{} start{} with =, +, - or @; a spreadsheet that opens the file would run {} as formulas",
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" },
                if n == 1 { "it" } else { "them" },
            ));
        }
    }
    notes
}

/// Formula-like cells of a CSV (`delimiter`: `None` for a comma, or what the file's
/// first line suggests) or TSV file.
fn formula_cells(path: &Path, delimiter: Option<u8>) -> anyhow::Result<u64> {
    let delimiter = match delimiter {
        Some(d) => d,
        None => crate::artifacts::table::preview_csv(path, 0, 1)?.delimiter as u8,
    };
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_path(path)?;
    let mut record = csv::ByteRecord::new();
    let mut n = 0;
    while rdr.read_byte_record(&mut record)? {
        for cell in record.iter() {
            if crate::explore::cell::is_formula(&String::from_utf8_lossy(cell), false) {
                n += 1;
            }
        }
    }
    Ok(n)
}

impl App {
    /// Copy session `id`'s outputs (and what `what` adds) to `dest`, a new folder or a
    /// new `.zip`; returns what was written, and a note for each table that a
    /// spreadsheet would run formulas of.
    pub async fn export_outputs(
        &self,
        id: &SessionId,
        dest: PathBuf,
        what: OutputsExport,
    ) -> Result<Exported, Error> {
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
            let notes = formula_notes(&files);
            let path = if what.zip {
                bundle::to_zip(&files, &dest)?
            } else {
                bundle::to_folder(&files, &dest)?
            };
            Ok(Exported { path, notes })
        })
        .await
    }

    /// Copy the whole session folder (metadata, transcript, outputs, workspace archive)
    /// into `dir/<id>`; returns the new folder.
    pub async fn copy_session(&self, id: &SessionId, dir: PathBuf) -> Result<PathBuf, Error> {
        let run = self.run_dir(id)?;
        blocking(move || run.copy_to(&dir)).await
    }

    /// Write session `id`'s analysis into `dir` (`analysis.ipynb`, `analysis.py`, the
    /// inputs in `dir/input/`); returns the files written.
    pub async fn export_analysis(
        &self,
        id: &SessionId,
        dir: PathBuf,
        formats: Formats,
    ) -> Result<Vec<PathBuf>, Error> {
        let run = self.run_dir(id)?;
        blocking(move || crate::analysis::to_folder(&run, &dir, formats)).await
    }

    /// Write session `id` as one self-contained HTML page to share
    /// ([`report_html`](crate::analysis::report_html): the answers, the report, the
    /// charts inlined, the tables, the code folded away, the provenance; it loads
    /// nothing) as the file `dest`. An existing `dest` is replaced only when `replace`
    /// is set (a save dialog asked). Returns what was written, with a note for each
    /// output the page leaves out.
    pub async fn export_report(
        &self,
        id: &SessionId,
        dest: PathBuf,
        replace: bool,
    ) -> Result<Exported, Error> {
        // A session that is not there is `not_found`, before any file is read.
        self.dir_of(id)?;
        let root = self.root().to_path_buf();
        let id = id.clone();
        blocking(move || {
            if dest.as_os_str().is_empty() || dest.is_dir() {
                return Err(Error::bad_input(format!(
                    "{} is a folder; name the report's file (e.g. report.html)",
                    dest.display()
                ))
                .into());
            }
            if !replace && dest.exists() {
                return Err(Error::bad_input(format!(
                    "{} already exists; pick another name or remove it first",
                    dest.display()
                ))
                .into());
            }
            let run = crate::store::Store::open(root)?.open_run(&id)?;
            let report = crate::analysis::report_html::write(&run, &dest)?;
            Ok(Exported {
                path: dest,
                notes: report.notes,
            })
        })
        .await
    }

    /// Copy one file of session `id` (`path` relative to its folder, e.g. a chart in
    /// `outputs/`) to `dest`, which the person chose in a save dialog (that dialog
    /// asked before replacing a file). Returns what was written.
    pub async fn save_file(
        &self,
        id: &SessionId,
        path: &str,
        dest: PathBuf,
    ) -> Result<PathBuf, Error> {
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
    fn run_dir(&self, id: &SessionId) -> Result<crate::store::RunDir, Error> {
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
