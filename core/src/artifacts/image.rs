//! PNG metadata, read so that a hostile image cannot exhaust memory: the header (IHDR)
//! is checked against a pixel limit before any pixel data is touched, the decoder's own
//! allocations are bounded by `png::Limits`, and soundness is checked one row at a time,
//! never with a whole-frame buffer.
//!
//! A decompression bomb (a few kilobytes on disk claiming 60000x60000 pixels) is thus
//! refused from its first 33 bytes, with a message saying why.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use anyhow::{bail, Context};
use serde::Serialize;

/// Images larger than this many pixels are refused rather than decoded.
pub const MAX_PIXELS: u64 = 50_000_000;

/// What the decoder may allocate for itself (metadata chunks, row buffers, the zlib
/// window). The pixel limit, not this, is what keeps frames small; this bounds
/// compressed metadata such as iCCP profiles.
pub const MAX_DECODER_BYTES: usize = 64 << 20;

/// The fewest pixels of an image that may be called blank: an icon or a test's tiny
/// image of one colour is what it is; a figure of one colour is an empty chart.
pub const BLANK_MIN_PIXELS: u64 = 64 * 64;

/// What a preview needs to know about a PNG, without holding its pixels.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImageInfo {
    pub width: u32,
    pub height: u32,
    /// Size of the file on disk.
    pub bytes: u64,
    /// `grayscale`, `rgb`, `indexed`, `grayscale_alpha` or `rgba`.
    pub color_type: &'static str,
    pub bit_depth: u8,
    /// Every pixel the same in an image of chart size (at least [`BLANK_MIN_PIXELS`]):
    /// a chart saved before anything was drawn on it.
    #[serde(skip)]
    pub blank: bool,
}

/// Decode a PNG fully (checking it is sound) and return its size, refusing huge ones.
pub fn png_dimensions(path: &Path) -> anyhow::Result<(u32, u32)> {
    let info = preview_png(path)?;
    Ok((info.width, info.height))
}

/// Check a PNG as [`png_dimensions`] does and describe it.
pub fn preview_png(path: &Path) -> anyhow::Result<ImageInfo> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let bytes = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    check_png(BufReader::new(file), bytes, &path.display().to_string())
}

/// [`preview_png`] over any reader of `bytes` bytes; `name` is for the messages.
pub fn check_png<R: std::io::BufRead + std::io::Seek>(
    reader: R,
    bytes: u64,
    name: &str,
) -> anyhow::Result<ImageInfo> {
    let path = Path::new(name);
    let mut decoder = png::Decoder::new_with_limits(
        reader,
        png::Limits {
            bytes: MAX_DECODER_BYTES,
        },
    );
    // Text chunks are never shown; skipping them also skips inflating zTXt/iTXt.
    decoder.set_ignore_text_chunk(true);

    // Only the signature and IHDR are read here: the limit is enforced before the
    // decoder sizes any buffer from the claimed dimensions.
    let header = decoder
        .read_header_info()
        .map_err(|e| decode_error(path, e, "is not a readable PNG"))?;
    let (width, height) = (header.width, header.height);
    check_pixels(path, width, height)?;
    let color_type = color_name(header.color_type);
    let bit_depth = header.bit_depth as u8;

    let mut reader = decoder
        .read_info()
        .map_err(|e| decode_error(path, e, "is not a readable PNG"))?;
    // One row at a time: this proves the compressed data is complete and consistent
    // with memory for a single row, whatever the frame size.
    let bpp = reader.info().bytes_per_pixel().max(1);
    let (mut first, mut blank): (Option<Vec<u8>>, bool) = (None, true);
    while let Some(row) = reader
        .next_row()
        .map_err(|e| decode_error(path, e, "is a damaged PNG"))?
    {
        if blank {
            let data = row.data();
            let px = first.get_or_insert_with(|| data[..bpp.min(data.len())].to_vec());
            blank = data.chunks(bpp).all(|c| c == px.as_slice());
        }
    }
    Ok(ImageInfo {
        width,
        height,
        bytes,
        color_type,
        bit_depth,
        blank: blank && u64::from(width) * u64::from(height) >= BLANK_MIN_PIXELS,
    })
}

fn check_pixels(path: &Path, width: u32, height: u32) -> anyhow::Result<()> {
    let pixels = u64::from(width) * u64::from(height);
    if pixels > MAX_PIXELS {
        bail!(
            "{} is {width}x{height} pixels ({} megapixels), over the {} megapixel limit; not decoded",
            path.display(),
            megapixels(pixels),
            megapixels(MAX_PIXELS),
        );
    }
    Ok(())
}

/// Megapixels for a message: whole numbers when large, one decimal when it matters
/// (so 50.4 is not shown as "50, over the 50 megapixel limit").
fn megapixels(pixels: u64) -> String {
    if pixels.is_multiple_of(1_000_000) || pixels >= 100_000_000 {
        format!("{}", pixels / 1_000_000)
    } else {
        format!("{:.1}", pixels as f64 / 1e6)
    }
}

fn decode_error(path: &Path, e: png::DecodingError, what: &str) -> anyhow::Error {
    match e {
        png::DecodingError::LimitsExceeded => anyhow::anyhow!(
            "{} needs more than {} MiB to decode; not decoded",
            path.display(),
            MAX_DECODER_BYTES >> 20
        ),
        e => anyhow::Error::new(e).context(format!("{} {what}", path.display())),
    }
}

fn color_name(c: png::ColorType) -> &'static str {
    match c {
        png::ColorType::Grayscale => "grayscale",
        png::ColorType::Rgb => "rgb",
        png::ColorType::Indexed => "indexed",
        png::ColorType::GrayscaleAlpha => "grayscale_alpha",
        png::ColorType::Rgba => "rgba",
    }
}

/// The content type of a file that is shown as an image, by extension; `None` for
/// anything that is not an image.
pub fn image_type(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_png(path: &Path, w: u32, h: u32, data: &[u8]) {
        let f = File::create(path).unwrap();
        let mut enc = png::Encoder::new(f, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.write_header().unwrap().write_image_data(data).unwrap();
    }

    #[test]
    fn describes_a_small_png() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.png");
        write_png(&p, 4, 3, &[7; 36]);
        let info = preview_png(&p).unwrap();
        assert_eq!((info.width, info.height), (4, 3));
        assert_eq!((info.color_type, info.bit_depth), ("rgb", 8));
        assert_eq!(info.bytes, std::fs::metadata(&p).unwrap().len());
    }

    #[test]
    fn truncated_pixel_data_is_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.png");
        // Incompressible pixels so the IDAT is long enough to cut in half.
        let data: Vec<u8> = (0..64 * 64 * 3)
            .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        write_png(&p, 64, 64, &data);
        let whole = std::fs::read(&p).unwrap();
        std::fs::write(&p, &whole[..whole.len() / 2]).unwrap();
        let err = format!("{:#}", preview_png(&p).unwrap_err());
        assert!(err.contains("is a damaged PNG"), "{err}");
    }

    #[test]
    fn megapixels_are_readable() {
        assert_eq!(megapixels(50_000_000), "50");
        assert_eq!(megapixels(50_410_000), "50.4");
        assert_eq!(megapixels(3_600_000_000), "3600");
        assert_eq!(megapixels(10_000_000_000), "10000");
    }
}
