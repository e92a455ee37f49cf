//! What an output file is, for listing and previews: its kind, size, and for images
//! their dimensions (decoded with limits, so a decompression bomb is refused).

use std::path::Path;

use anyhow::{bail, Context};
use serde::Serialize;

/// Images larger than this many pixels are refused rather than decoded.
pub const MAX_PIXELS: u64 = 50_000_000;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Image,
    Table,
    Report,
    Other,
}

#[derive(Clone, Debug, Serialize)]
pub struct Artifact {
    pub path: String,
    pub kind: Kind,
    pub bytes: u64,
    /// (width, height) of a PNG.
    pub dimensions: Option<(u32, u32)>,
}

pub fn kind_of(name: &str) -> Kind {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" | "jpg" | "jpeg" | "svg" | "gif" => Kind::Image,
        "csv" | "tsv" | "parquet" | "xlsx" => Kind::Table,
        "md" | "markdown" | "txt" | "html" => Kind::Report,
        _ => Kind::Other,
    }
}

/// Describe one output file; `rel` is its name relative to the outputs folder.
pub fn describe(root: &Path, rel: &str) -> anyhow::Result<Artifact> {
    let path = root.join(rel);
    let bytes = std::fs::metadata(&path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    let kind = kind_of(rel);
    let dimensions = if rel.to_ascii_lowercase().ends_with(".png") {
        Some(png_dimensions(&path)?)
    } else {
        None
    };
    Ok(Artifact {
        path: rel.to_string(),
        kind,
        bytes,
        dimensions,
    })
}

/// Fully decode a PNG (checking it is sound) and return its size, refusing huge ones.
pub fn png_dimensions(path: &Path) -> anyhow::Result<(u32, u32)> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_limits(png::Limits { bytes: 256 << 20 });
    let mut reader = decoder
        .read_info()
        .with_context(|| format!("{} is not a readable PNG", path.display()))?;
    let (w, h) = (reader.info().width, reader.info().height);
    if u64::from(w) * u64::from(h) > MAX_PIXELS {
        bail!(
            "{} is {w}x{h} pixels, over the {MAX_PIXELS} pixel limit; not decoded",
            path.display()
        );
    }
    let mut buf = vec![0; reader.output_buffer_size()];
    reader
        .next_frame(&mut buf)
        .with_context(|| format!("{} is a damaged PNG", path.display()))?;
    Ok((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_is_decoded_and_garbage_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.png");
        {
            let f = std::fs::File::create(&p).unwrap();
            let mut enc = png::Encoder::new(f, 3, 2);
            enc.set_color(png::ColorType::Grayscale);
            enc.write_header()
                .unwrap()
                .write_image_data(&[0; 6])
                .unwrap();
        }
        assert_eq!(
            describe(dir.path(), "a.png").unwrap().dimensions,
            Some((3, 2))
        );
        std::fs::write(dir.path().join("b.png"), b"not a png").unwrap();
        assert!(describe(dir.path(), "b.png").is_err());
        assert_eq!(kind_of("x/report.MD"), Kind::Report);
    }
}
