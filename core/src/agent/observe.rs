//! What one tool call gives back: the structured result for the UI, the artifacts
//! it created or changed in `output/`, the figures it displayed, and the text and
//! images for the model, held to a budget.

use base64::Engine as _;

use super::events::{ArtifactKind, EventKind};
use super::Host;
use crate::egress::{EgressKind, Refusal};
use crate::model::{ImagePart, Item};
use crate::protocol::Notice;
use crate::sandbox::{Connections, ExecResult, ExecStatus, OutputEntry, Sandbox};

/// The most characters of one tool result the model is given (head and tail kept).
pub const OUTPUT_BUDGET: usize = 12_000;
/// The longest side of an image sent to a model.
pub const MAX_IMAGE_SIDE: u32 = 1568;
/// Images given to the model for one call, at most.
const MAX_IMAGES_PER_CALL: usize = 4;
/// Larger image files are not read back for the model.
const MAX_IMAGE_BYTES: u64 = 32 << 20;
/// Output files up to this size are copied to the host as soon as a call writes them,
/// the first [`MAX_LIVE_COPIES`] of a call.
const LIVE_COPY_BYTES: u64 = 64 << 20;
const MAX_LIVE_COPIES: usize = 16;
/// Artifact events for one call, at most.
const MAX_ARTIFACT_EVENTS: usize = 100;
/// Where the full output of a shortened result is kept, inside the workspace.
pub const FULL_OUTPUT_DIR: &str = ".sandalyst/calls";

/// What a call produced, gathered in the order the loop needs it.
#[derive(Default)]
pub struct Seen {
    result: Option<ExecResult>,
    text: String,
    is_error: bool,
    figures: Vec<Vec<u8>>,
    images: Vec<ImagePart>,
    /// Lines for the model appended to the result (files added, skipped images).
    pub notes: Vec<String>,
}

impl Seen {
    /// The call never ran: unknown tool, switched off, bad arguments.
    pub fn refused(&mut self, message: String) {
        self.text = message;
        self.is_error = true;
    }

    /// Whether the call failed (an error, a refusal, a timeout).
    pub fn failed(&self) -> bool {
        self.is_error
    }

    pub fn ran(&mut self, mut r: ExecResult) {
        self.text = super::tools::observation(&r);
        self.is_error = r.status != ExecStatus::Ok;
        self.figures = std::mem::take(&mut r.figures);
        self.result = Some(r);
    }

    /// `view_image`: the picture itself, or why not.
    pub async fn view(&mut self, sandbox: &dyn Sandbox, path: &str) {
        let rel = path.trim_start_matches("/workspace/");
        match read_image(sandbox, rel).await {
            Ok(part) => {
                self.text = format!("showing {rel}");
                self.images.push(part);
            }
            Err(e) => self.refused(format!("error: cannot show {rel}: {e:#}")),
        }
    }

    /// The connections the call's code made through the egress proxy: an event each,
    /// and one line for the model (and the transcript) on what was let through and
    /// what was refused, and why.
    pub fn connections(&mut self, call_id: &str, conns: Connections, host: &dyn Host) {
        if let Some(line) = network_note(&conns) {
            self.notes.push(line);
        }
        for connection in conns.events {
            host.emit(EventKind::Egress {
                call_id: call_id.into(),
                connection,
            });
        }
    }

    /// Tell the UI how the call ended, and hand over the figures it displayed.
    pub fn report(&self, call_id: &str, host: &dyn Host) {
        let r = self.result.as_ref();
        host.emit(EventKind::CellResult {
            call_id: call_id.into(),
            status: r.map(|r| r.status),
            duration_ms: r.map_or(0, |r| r.duration_ms),
            stdout: r.map(|r| r.stdout.clone()).unwrap_or_default(),
            stderr: r.map(|r| r.stderr.clone()).unwrap_or_default(),
            traceback: r.and_then(|r| r.traceback.clone()),
            note: match r {
                Some(r) => r.note.clone(),
                None => Some(self.text.clone()),
            },
        });
        for (i, png) in self.figures.iter().enumerate() {
            match host.save_figure(call_id, i, png) {
                Ok(path) => host.emit(EventKind::CellImage {
                    call_id: call_id.into(),
                    path,
                }),
                Err(e) => host.emit(EventKind::Notice(Notice::FigureNotKept {
                    call_id: call_id.into(),
                    reason: format!("{e:#}"),
                })),
            }
        }
    }

    /// Compare `output/` with `before`: an event per new or changed file, and the
    /// changed images for a model that takes them. Returns the new listing.
    pub async fn artifacts(
        &mut self,
        call_id: &str,
        sandbox: &dyn Sandbox,
        before: &[OutputEntry],
        host: &dyn Host,
        vision: bool,
    ) -> Vec<OutputEntry> {
        let Ok(now) = sandbox.list_outputs().await else {
            return before.to_vec();
        };
        let changed = changed(before, &now);
        // A call that floods output/ (thousands of scratch files) gets events and live
        // copies for the first files only; the rest is collected when the ask ends.
        for (i, f) in changed.iter().enumerate() {
            if i == MAX_ARTIFACT_EVENTS {
                host.emit(EventKind::Notice(Notice::MoreOutputsChanged {
                    count: changed.len() - i,
                }));
                break;
            }
            let kind = ArtifactKind::of(&f.path);
            // A copy now, so the file can be shown at once; all of output/ is
            // collected, with its checks, when the ask ends.
            if let (Some(dir), true) = (
                host.outputs_dir(),
                f.bytes <= LIVE_COPY_BYTES && i < MAX_LIVE_COPIES,
            ) {
                if let Ok(bytes) = sandbox
                    .read_file(&format!("output/{}", f.path), LIVE_COPY_BYTES)
                    .await
                {
                    let rel = f.path.clone();
                    // Through the same check as the final collection.
                    let _ = tokio::task::spawn_blocking(move || {
                        crate::workspace::keep_live_copy(&dir, &rel, &bytes)
                    })
                    .await;
                }
            }
            host.emit(EventKind::Artifact {
                call_id: call_id.into(),
                path: f.path.clone(),
                kind,
                bytes: f.bytes,
            });
            let raster = [".png", ".jpg", ".jpeg"]
                .iter()
                .any(|e| f.path.to_ascii_lowercase().ends_with(e));
            if vision && raster && self.images.len() < MAX_IMAGES_PER_CALL {
                match read_image(sandbox, &format!("output/{}", f.path)).await {
                    Ok(part) => self.images.push(part),
                    Err(e) => self.notes.push(format!(
                        "output/{} could not be shown to you: {e:#}",
                        f.path
                    )),
                }
            }
        }
        now
    }

    /// The item for the conversation: the result text within the budget (the whole
    /// kept in the workspace when cut), notes, and images.
    pub async fn into_item(
        mut self,
        call_id: &str,
        sandbox: &dyn Sandbox,
        vision: bool,
    ) -> anyhow::Result<Item> {
        // A chart saved to output/ and left open comes back as a figure too (as in
        // Jupyter): the saved file is what the user gets, so the model sees that one.
        let saved_chart = self.images.iter().any(|p| p.label.starts_with("output/"));
        if vision && !saved_chart {
            let room = MAX_IMAGES_PER_CALL.saturating_sub(self.images.len());
            let figures: Vec<Vec<u8>> = self.figures.drain(..).take(room).collect();
            // Decoding and scaling is CPU work: off the async runtime.
            let parts = tokio::task::spawn_blocking(move || {
                figures.iter().map(|png| scaled(png)).collect::<Vec<_>>()
            })
            .await?;
            for (i, part) in parts.into_iter().enumerate() {
                if let Ok(mut part) = part {
                    part.label = format!("figure {} of this call", i + 1);
                    self.images.push(part);
                }
            }
        }
        let mut output = self.text;
        if output.chars().count() > OUTPUT_BUDGET {
            let rel = format!("{FULL_OUTPUT_DIR}/{}.txt", safe_name(call_id));
            let kept = match sandbox.write_file(&rel, output.as_bytes()).await {
                Ok(()) => format!("the whole output is in /workspace/{rel}"),
                Err(_) => "the whole output was not kept".to_string(),
            };
            output = shorten(&output, OUTPUT_BUDGET, &kept);
        }
        for note in &self.notes {
            output.push_str(&format!("\n[note] {note}"));
        }
        Ok(Item::ToolOutput {
            call_id: call_id.into(),
            output,
            is_error: self.is_error,
            images: self.images,
        })
    }
}

/// Most targets named in one network note.
const MAX_NOTED: usize = 8;

/// `network: reached pypi.org:443 (2); refused example.com:443 (not in the allowlist)`.
fn network_note(conns: &Connections) -> Option<String> {
    let target = |h: &str, p: u16| match h {
        "" => "an unreadable request".to_string(),
        h if h.contains(':') => format!("[{h}]:{p}"),
        h => format!("{h}:{p}"),
    };
    let mut reached: Vec<(String, usize)> = Vec::new();
    let mut refused: Vec<(String, String)> = Vec::new();
    for ev in &conns.events {
        match &ev.kind {
            EgressKind::Allowed { .. } => {
                let t = target(&ev.host, ev.port);
                match reached.iter_mut().find(|(n, _)| *n == t) {
                    Some((_, count)) => *count += 1,
                    None => reached.push((t, 1)),
                }
            }
            EgressKind::Refused { reason } => {
                let why = match reason {
                    Refusal::NotInAllowlist => "not in the allowlist".to_string(),
                    other => other.to_string(),
                };
                let t = (target(&ev.host, ev.port), why);
                if !refused.contains(&t) {
                    refused.push(t);
                }
            }
            EgressKind::Closed { .. } => {}
        }
    }
    if reached.is_empty() && refused.is_empty() && conns.dropped == 0 {
        return None;
    }
    let list = |items: Vec<String>| {
        let more = items.len().saturating_sub(MAX_NOTED);
        let mut shown: Vec<String> = items.into_iter().take(MAX_NOTED).collect();
        if more > 0 {
            shown.push(format!("{more} more"));
        }
        shown.join(", ")
    };
    let mut parts = Vec::new();
    if !reached.is_empty() {
        let items = reached
            .into_iter()
            .map(|(t, n)| if n > 1 { format!("{t} ({n}x)") } else { t })
            .collect();
        parts.push(format!("reached {}", list(items)));
    }
    if !refused.is_empty() {
        let items = refused
            .into_iter()
            .map(|(t, why)| format!("{t} ({why})"))
            .collect();
        parts.push(format!("refused {}", list(items)));
    }
    if conns.dropped > 0 {
        parts.push(format!("{} earlier connections not listed", conns.dropped));
    }
    Some(format!("network (allowlist proxy): {}", parts.join("; ")))
}

/// Files in `now` that are new or differ from `before` in size or time.
pub fn changed<'a>(before: &[OutputEntry], now: &'a [OutputEntry]) -> Vec<&'a OutputEntry> {
    now.iter()
        .filter(|f| !before.iter().any(|b| b == *f))
        .collect()
}

/// Keep the head and the tail of `text` within `budget` characters, saying what was cut.
pub fn shorten(text: &str, budget: usize, where_whole: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= budget {
        return text.to_string();
    }
    let half = budget / 2;
    let head: String = chars[..half].iter().collect();
    let tail: String = chars[chars.len() - half..].iter().collect();
    format!(
        "{head}\n[... output truncated: {} of {} characters cut to fit the output budget; {where_whole} ...]\n{tail}",
        chars.len() - 2 * half,
        chars.len()
    )
}

fn safe_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

async fn read_image(sandbox: &dyn Sandbox, rel: &str) -> anyhow::Result<ImagePart> {
    let bytes = sandbox.read_file(rel, MAX_IMAGE_BYTES).await?;
    let mut part = tokio::task::spawn_blocking(move || scaled(&bytes)).await??;
    part.label = rel.to_string();
    Ok(part)
}

/// An image as the model takes it: PNG or JPEG, at most [`MAX_IMAGE_SIDE`] on the long
/// side; decoded under limits, since the bytes come from code in the sandbox.
pub fn scaled(bytes: &[u8]) -> anyhow::Result<ImagePart> {
    use image::{ImageFormat, ImageReader};
    let mut reader = ImageReader::new(std::io::Cursor::new(bytes)).with_guessed_format()?;
    let format = reader
        .format()
        .filter(|f| matches!(f, ImageFormat::Png | ImageFormat::Jpeg))
        .ok_or_else(|| anyhow::anyhow!("not a PNG or JPEG image"))?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(20_000);
    limits.max_image_height = Some(20_000);
    limits.max_alloc = Some(512 << 20);
    reader.limits(limits);
    let (w, h) = reader.into_dimensions()?;
    let media_type = if format == ImageFormat::Png {
        "image/png"
    } else {
        "image/jpeg"
    };
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    if w.max(h) <= MAX_IMAGE_SIDE {
        return Ok(ImagePart {
            media_type: media_type.into(),
            data: b64(bytes),
            label: String::new(),
        });
    }
    let mut reader = ImageReader::new(std::io::Cursor::new(bytes)).with_guessed_format()?;
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(512 << 20);
    reader.limits(limits);
    let img = reader.decode()?.thumbnail(MAX_IMAGE_SIDE, MAX_IMAGE_SIDE);
    // The fast deflate: a model is billed by pixels, not bytes, and the default level
    // takes several times longer for a chart that is a few tens of percent smaller.
    let mut out = Vec::new();
    img.write_with_encoder(image::codecs::png::PngEncoder::new_with_quality(
        &mut out,
        image::codecs::png::CompressionType::Fast,
        image::codecs::png::FilterType::Adaptive,
    ))?;
    Ok(ImagePart {
        media_type: "image/png".into(),
        data: b64(&out),
        label: String::new(),
    })
}

/// What the model is told of the kernel's namespace after a Python cell: the names
/// the cell added (a line), or, when it failed on a name that does not exist, every
/// name there is, since a reply that was cut never ran and what it defined is not
/// there. `known` is the namespace after the last cell, updated here.
pub fn names_note(r: &ExecResult, known: &mut Vec<String>) -> Option<String> {
    let listed = r.names.as_deref()?;
    let entries = split_names(listed);
    let name_of = |e: &str| e.split(" (").next().unwrap_or(e).to_string();
    let missing = r
        .traceback
        .as_deref()
        .and_then(|tb| {
            tb.rsplit("NameError: name '")
                .next()
                .filter(|_| tb.contains("NameError: name '"))
        })
        .and_then(|rest| rest.split('\'').next())
        .map(str::to_string);
    let before = std::mem::replace(known, entries.iter().map(|e| name_of(e)).collect());
    if let Some(name) = missing {
        let all = if listed.is_empty() {
            "nothing yet".into()
        } else {
            listed.to_string()
        };
        let import = match name.as_str() {
            "pd" => " Import it in this cell: import pandas as pd.",
            "np" => " Import it in this cell: import numpy as np.",
            "plt" => " Import it in this cell: import matplotlib.pyplot as plt.",
            "sns" => " Import it in this cell: import seaborn as sns.",
            "stats" => " Import it in this cell: from scipy import stats.",
            _ => "",
        };
        return Some(format!(
            "`{name}` does not exist in the kernel: only what a cell that ran defined is there \
             (a reply that was cut never ran). Defined now: {all}.{import}"
        ));
    }
    let added: Vec<&str> = entries
        .iter()
        .map(String::as_str)
        .filter(|e| !before.contains(&name_of(e)))
        .collect();
    (!added.is_empty()).then(|| format!("New names in the kernel: {}.", added.join(", ")))
}

/// The entries of the kernel's list ("df (DataFrame 8760x4)"), its "and N more"
/// tail dropped.
fn split_names(listed: &str) -> Vec<String> {
    let parts: Vec<&str> = listed.split("), ").collect();
    let last = parts.len().saturating_sub(1);
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i < last {
                format!("{p})")
            } else {
                p.to_string()
            }
        })
        .flat_map(|p| {
            // "x (int), and 3 more" ends the list.
            let p = p.split(", and ").next().unwrap_or("").to_string();
            (!p.trim().is_empty() && !p.starts_with("and ")).then_some(p)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, bytes: u64, t: u128) -> OutputEntry {
        OutputEntry {
            path: path.into(),
            bytes,
            modified_ns: t,
        }
    }

    #[test]
    fn changed_files_are_new_or_different() {
        let before = vec![entry("a.csv", 1, 1), entry("b.png", 2, 2)];
        let now = vec![
            entry("a.csv", 1, 1),
            entry("b.png", 3, 5),
            entry("c.md", 1, 9),
        ];
        let paths: Vec<_> = changed(&before, &now)
            .iter()
            .map(|f| f.path.clone())
            .collect();
        assert_eq!(paths, ["b.png", "c.md"]);
    }

    #[test]
    fn long_results_keep_head_and_tail() {
        let text = format!("{}{}", "a".repeat(20_000), "z".repeat(20_000));
        let s = shorten(&text, OUTPUT_BUDGET, "kept at X");
        assert!(s.starts_with(&"a".repeat(6000)));
        assert!(s.ends_with(&"z".repeat(6000)));
        assert!(s.contains("28000 of 40000 characters cut") && s.contains("kept at X"));
        assert!(s.chars().count() < OUTPUT_BUDGET + 200);
        assert_eq!(shorten("short", 10, ""), "short");
    }

    #[test]
    fn big_images_are_scaled_and_small_ones_pass_through() {
        let img = image::RgbImage::from_pixel(3000, 1000, image::Rgb([200, 10, 10]));
        let mut png = std::io::Cursor::new(Vec::new());
        img.write_to(&mut png, image::ImageFormat::Png).unwrap();
        let part = scaled(png.get_ref()).unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&part.data)
            .unwrap();
        let back = image::load_from_memory(&bytes).unwrap();
        assert_eq!((back.width(), back.height()), (1568, 523));
        let small = image::RgbImage::from_pixel(10, 10, image::Rgb([0, 0, 0]));
        let mut png = std::io::Cursor::new(Vec::new());
        small.write_to(&mut png, image::ImageFormat::Png).unwrap();
        let part = scaled(png.get_ref()).unwrap();
        assert_eq!(part.media_type, "image/png");
        assert!(scaled(b"<svg/>").is_err());
    }

    #[test]
    fn the_kernels_names_are_told_as_new_ones_and_in_full_on_a_name_error() {
        let mut known = Vec::new();
        let mut r = ExecResult::empty(ExecStatus::Ok, 1);
        r.names = Some("df (DataFrame 1344x3), n (int)".into());
        assert_eq!(
            names_note(&r, &mut known).unwrap(),
            "New names in the kernel: df (DataFrame 1344x3), n (int)."
        );
        r.names = Some("df (DataFrame 1344x3), n (int), daily (Series 56), and 3 more".into());
        assert_eq!(
            names_note(&r, &mut known).unwrap(),
            "New names in the kernel: daily (Series 56)."
        );
        assert_eq!(names_note(&r, &mut known), None);
        let mut failed = ExecResult::empty(ExecStatus::Error, 1);
        failed.names = Some("df (DataFrame 1344x3)".into());
        failed.traceback = Some("Traceback\nNameError: name 'hourly' is not defined\n".into());
        let note = names_note(&failed, &mut known).unwrap();
        assert!(
            note.starts_with("`hourly` does not exist in the kernel"),
            "{note}"
        );
        assert!(
            note.ends_with("Defined now: df (DataFrame 1344x3)."),
            "{note}"
        );
    }
}
