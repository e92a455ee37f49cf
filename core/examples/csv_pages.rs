//! Measures table pages of a 1,000,000-row CSV as the desktop reads them (first page
//! of the preview, then pages anywhere through the row index). See BENCHMARKS.md.
//!
//! cargo run --release -p sandalyst --example csv_pages

use std::io::Write;
use std::time::Instant;

use sandalyst::api::preview::{self, Preview};
use sandalyst::artifacts::csv_index;

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("million.csv");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
        writeln!(f, "timestamp,meter,energy_kwh,outdoor_temp_c,note")?;
        for i in 0..1_000_000u64 {
            writeln!(
                f,
                "2024-01-01T{:02}:{:02}:00,m{},{:.2},{:.1},row {i}",
                (i / 60) % 24,
                i % 60,
                i % 17,
                40.0 + (i % 97) as f64 * 0.7,
                (i % 31) as f64 - 5.0
            )?;
        }
    }
    let bytes = std::fs::metadata(&path)?.len();
    println!("file: 1,000,000 rows, {:.1} MB", bytes as f64 / 1e6);
    let root = dir.path();
    let t = Instant::now();
    let p = preview::preview("sandalyst://localhost/s/", root, "million.csv")?;
    println!("first page (200 rows, preview_file): {:?}", t.elapsed());
    if let Preview::Table { page } = &p.preview {
        println!(
            "  total_rows known on the first page: {:?}",
            page.total_rows
        );
    }
    let t = Instant::now();
    let pg = csv_index::page(&path, 500_000, 200)?;
    println!(
        "first page far away (row 500,000; builds the index): {:?}",
        t.elapsed()
    );
    assert_eq!(pg.rows[0][4], "row 500000");
    let mut worst = std::time::Duration::ZERO;
    let mut total = std::time::Duration::ZERO;
    let offsets: Vec<usize> = (0..200).map(|i| (i * 4_999 + 123) % 999_800).collect();
    for &o in &offsets {
        let t = Instant::now();
        let pg = csv_index::page(&path, o, 200)?;
        let e = t.elapsed();
        assert_eq!(pg.rows[0][4], format!("row {o}"));
        worst = worst.max(e);
        total += e;
    }
    println!(
        "later pages (200 rows, 200 random offsets): mean {:?}, worst {:?}",
        total / offsets.len() as u32,
        worst
    );
    Ok(())
}
