//! The cells of a view as Arrow columns of their column's kind, for a view saved as
//! Parquet: integers stay integers, numbers doubles, dates dates, datetimes UTC
//! timestamps (as the explorer's pandas code reads them, `utc=True`), booleans
//! booleans; a missing cell ([`cell::is_missing`]) is a null, in every kind.
//!
//! The kinds are the whole file's ([`super::source::Profile`]), so every cell that is
//! not missing reads as its column's kind; one that does not is an error, never a
//! silent null.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

use super::cell::{self, Kind};

/// A cell that does not read as its column's kind.
#[derive(Debug, thiserror::Error)]
#[error("row {row} of the view, column {column:?}: {cell:?} is not {}", a(*.kind))]
pub struct NotOfKind {
    /// 1-based, in the view's order.
    pub row: usize,
    pub column: String,
    pub cell: String,
    pub kind: Kind,
}

/// "an integer", "a date".
fn a(kind: Kind) -> String {
    let name = kind.name();
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// The Arrow type a column of `kind` is saved as. An empty column (every cell
/// missing) is text, all null.
pub fn data_type(kind: Kind) -> DataType {
    match kind {
        Kind::Integer => DataType::Int64,
        Kind::Number => DataType::Float64,
        Kind::Date => DataType::Date32,
        Kind::Datetime => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        Kind::Boolean => DataType::Boolean,
        Kind::Text | Kind::Empty => DataType::Utf8,
    }
}

/// The schema of a view's file: one nullable field a column. A name seen before gets
/// `.1`, `.2` (as pandas' `read_csv` names repeated headers), since readers of
/// Parquet do not take two columns of one name.
pub fn schema(headers: &[String], kinds: &[Kind]) -> SchemaRef {
    let mut seen = std::collections::HashSet::new();
    let fields: Vec<Field> = headers
        .iter()
        .zip(kinds)
        .map(|(h, &k)| {
            let mut name = h.clone();
            let mut n = 0;
            while !seen.insert(name.clone()) {
                n += 1;
                name = format!("{h}.{n}");
            }
            Field::new(name, data_type(k), true)
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// How cells are read: what the table says about its text.
#[derive(Clone, Copy)]
pub struct Reading {
    /// Text spelled like pandas' `na_values` is missing (CSV, a workbook's strings).
    pub text_na: bool,
    pub decimal_comma: bool,
}

/// `rows` (each row's cells as the explorer reads them; a short row's last cells are
/// missing) as one batch of `schema`, whose columns have `kinds`. `first` is the
/// 0-based place in the view of `rows[0]`, for errors.
pub fn batch(
    schema: &SchemaRef,
    kinds: &[Kind],
    rows: &[Vec<String>],
    first: usize,
    how: Reading,
) -> anyhow::Result<RecordBatch> {
    let columns = kinds
        .iter()
        .enumerate()
        .map(|(c, &kind)| {
            column(c, kind, rows, how).map_err(|(r, cell)| NotOfKind {
                row: first + r + 1,
                column: schema.field(c).name().clone(),
                cell,
                kind,
            })
        })
        .collect::<Result<Vec<ArrayRef>, NotOfKind>>()?;
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

/// Column `c` of `rows` as an array of `kind`; the row and cell that do not read so.
fn column(
    c: usize,
    kind: Kind,
    rows: &[Vec<String>],
    how: Reading,
) -> Result<ArrayRef, (usize, String)> {
    // Each cell that is there, or `None` for a missing one.
    let cells = rows.iter().map(|r| {
        let cell = r.get(c).map(String::as_bytes);
        (!cell::is_missing(cell, how.text_na)).then(|| cell.unwrap_or_default())
    });
    // Fill `builder` with `read` of each present cell, a null for each missing one.
    macro_rules! typed {
        ($builder:expr, $read:expr) => {{
            let mut b = $builder;
            for (r, cell) in cells.enumerate() {
                match cell {
                    None => b.append_null(),
                    Some(x) => match $read(x) {
                        Some(v) => b.append_value(v),
                        None => return Err((r, String::from_utf8_lossy(x).into_owned())),
                    },
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    let n = rows.len();
    Ok(match kind {
        Kind::Integer => typed!(Int64Builder::with_capacity(n), |x: &[u8]| text(x)?
            .parse::<i64>()
            .ok()),
        Kind::Number => typed!(Float64Builder::with_capacity(n), |x: &[u8]| {
            // Rust's own syntax too: a Parquet double shows `inf` and `NaN`, which
            // pandas' text syntax does not read.
            cell::number(x, how.decimal_comma).or_else(|| text(x)?.parse().ok())
        }),
        Kind::Date => typed!(Date32Builder::with_capacity(n), |x: &[u8]| {
            let days = cell::date(x)
                .or_else(|| cell::instant(x).map(|(s, _)| (s / 86_400.0).floor() as i64))?;
            i32::try_from(days).ok()
        }),
        Kind::Datetime => typed!(
            TimestampMicrosecondBuilder::with_capacity(n).with_timezone("UTC"),
            |x: &[u8]| cell::instant(x).map(|(s, _)| (s * 1e6).round() as i64)
        ),
        Kind::Boolean => typed!(BooleanBuilder::with_capacity(n), cell::boolean),
        Kind::Text | Kind::Empty => typed!(StringBuilder::with_capacity(n, 0), lossy),
    })
}

fn lossy(x: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    Some(String::from_utf8_lossy(x))
}

fn text(x: &[u8]) -> Option<&str> {
    std::str::from_utf8(x.trim_ascii()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Float64Type, Int64Type, TimestampMicrosecondType};
    use arrow_array::Array;

    fn rows(cells: &[&[&str]]) -> Vec<Vec<String>> {
        cells
            .iter()
            .map(|r| r.iter().map(|c| c.to_string()).collect())
            .collect()
    }

    const CSV: Reading = Reading {
        text_na: true,
        decimal_comma: false,
    };

    #[test]
    fn each_kind_is_its_arrow_type_and_missing_cells_are_null() {
        let kinds = [
            Kind::Integer,
            Kind::Number,
            Kind::Date,
            Kind::Datetime,
            Kind::Boolean,
            Kind::Text,
            Kind::Empty,
        ];
        let headers: Vec<String> = ["i", "x", "d", "t", "b", "s", "e"]
            .map(String::from)
            .to_vec();
        let s = schema(&headers, &kinds);
        let b = batch(
            &s,
            &kinds,
            &rows(&[
                &[
                    "-7",
                    "1.5",
                    "2024-02-29",
                    "2024-01-05 10:00:00.25",
                    "Yes",
                    "NA",
                    "",
                ],
                &["", "NaN", "", "2024-01-05T11:00+01:00", "false", "Bilbao"],
            ]),
            0,
            CSV,
        )
        .unwrap();
        assert_eq!(b.num_rows(), 2);
        let i = b.column(0).as_primitive::<Int64Type>();
        assert_eq!((i.value(0), i.is_null(1)), (-7, true));
        let x = b.column(1).as_primitive::<Float64Type>();
        // "NaN" is one of pandas' missing spellings in a CSV file.
        assert_eq!((x.value(0), x.is_null(1)), (1.5, true));
        let d = b.column(2).as_primitive::<Date32Type>();
        assert_eq!(d.value(0), cell::date(b"2024-02-29").unwrap() as i32);
        let t = b.column(3).as_primitive::<TimestampMicrosecondType>();
        let ten = cell::instant(b"2024-01-05 10:00").unwrap().0 as i64 * 1_000_000;
        // The zone is applied: 11:00+01:00 is 10:00 UTC.
        assert_eq!((t.value(0), t.value(1)), (ten + 250_000, ten));
        assert_eq!(
            s.field(3).data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        let bo = b.column(4).as_boolean();
        assert!(bo.value(0) && !bo.value(1));
        let st = b.column(5).as_string::<i32>();
        assert_eq!((st.is_null(0), st.value(1)), (true, "Bilbao"));
        // A short row's missing last cell, and an empty column: nulls.
        assert_eq!(b.column(6).null_count(), 2);
    }

    #[test]
    fn typed_sources_keep_na_text_and_read_decimal_commas_and_infinities() {
        let kinds = [Kind::Text, Kind::Number];
        let headers = vec!["s".to_string(), "x".to_string()];
        let s = schema(&headers, &kinds);
        let how = Reading {
            text_na: false,
            decimal_comma: true,
        };
        let b = batch(&s, &kinds, &rows(&[&["NA", "2,5"], &["x", "inf"]]), 0, how).unwrap();
        assert_eq!(b.column(0).as_string::<i32>().value(0), "NA");
        let x = b.column(1).as_primitive::<Float64Type>();
        assert_eq!((x.value(0), x.value(1)), (2.5, f64::INFINITY));
    }

    #[test]
    fn a_cell_not_of_its_kind_is_an_error_that_names_it() {
        let kinds = [Kind::Integer];
        let s = schema(&["n".to_string()], &kinds);
        let err = batch(&s, &kinds, &rows(&[&["1"], &["1.5"]]), 1000, CSV).unwrap_err();
        let e = err.downcast_ref::<NotOfKind>().expect("typed error");
        assert_eq!(
            (e.row, e.cell.as_str(), e.kind),
            (1002, "1.5", Kind::Integer)
        );
        assert_eq!(
            err.to_string(),
            "row 1002 of the view, column \"n\": \"1.5\" is not an integer"
        );
    }

    #[test]
    fn repeated_headers_get_numbered_names() {
        let h: Vec<String> = ["a", "a", "b", "a"].map(String::from).to_vec();
        let s = schema(&h, &[Kind::Text; 4]);
        let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["a", "a.1", "b", "a.2"]);
    }
}
