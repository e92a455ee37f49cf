//! JSON tables as an in-memory table: an array of records (`df.to_json(orient=
//! "records")`), an object of columns (`{"col": [..]}` or pandas' default
//! `{"col": {"0": ..}}`), or JSON Lines (one record a line).
//!
//! Columns come in the order they first appear, as pandas builds them. A `null` is a
//! missing cell; text such as `"NA"` stays text (pandas' `read_json` reads it so). Other
//! values are shown as JSON writes them (`true`, `1.5`), nested ones as JSON text.

use std::fmt;
use std::io::BufRead;
use std::path::Path;

use anyhow::{bail, Context};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::source::Mem;
use crate::artifacts::table::MAX_COLUMNS;

/// JSON files larger than this are not explored (they are parsed whole).
pub const MAX_JSON_BYTES: u64 = 128 << 20;

/// An object with its keys in file order (serde_json's map sorts them).
struct Ordered(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Value>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The document: records, or an object of columns.
enum Doc {
    Records(Vec<Ordered>),
    Columns(Ordered),
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Doc;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of records or an object of columns")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Doc, A::Error> {
                let mut out = Vec::new();
                while let Some(r) = s.next_element::<Ordered>()? {
                    out.push(r);
                }
                Ok(Doc::Records(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Doc, A::Error> {
                Ordered::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(Doc::Columns)
            }
        }
        d.deserialize_any(V)
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

struct Builder {
    headers: Vec<String>,
    rows: Vec<Vec<Option<String>>>,
}

impl Builder {
    fn column(&mut self, name: &str) -> usize {
        match self.headers.iter().position(|h| h == name) {
            Some(i) => i,
            None => {
                self.headers.push(name.to_string());
                self.headers.len() - 1
            }
        }
    }
    fn record(&mut self, r: Ordered) {
        let mut row = vec![None; self.headers.len()];
        for (k, v) in r.0 {
            let c = self.column(&k);
            if c >= MAX_COLUMNS {
                continue;
            }
            if row.len() <= c {
                row.resize(c + 1, None);
            }
            row[c] = text(&v);
        }
        self.rows.push(row);
    }
}

pub fn load(path: &Path, lines: bool) -> anyhow::Result<Mem> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    if len > MAX_JSON_BYTES {
        bail!(
            "{} is larger than {} MiB; JSON files that large are not explored",
            path.display(),
            MAX_JSON_BYTES >> 20
        );
    }
    let mut b = Builder {
        headers: Vec::new(),
        rows: Vec::new(),
    };
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    if lines {
        for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line.with_context(|| format!("cannot read {}", path.display()))?;
            if line.trim().is_empty() {
                continue;
            }
            let r: Ordered = serde_json::from_str(&line).with_context(|| {
                format!("{}: line {} is not a JSON object", path.display(), i + 1)
            })?;
            b.record(r);
        }
    } else {
        let doc: Doc =
            serde_json::from_reader(std::io::BufReader::new(file)).with_context(|| {
                format!(
                    "{} is not an array of records or an object of columns",
                    path.display()
                )
            })?;
        match doc {
            Doc::Records(rs) => rs.into_iter().for_each(|r| b.record(r)),
            Doc::Columns(cols) => {
                for (c, (name, values)) in cols.0.into_iter().enumerate().take(MAX_COLUMNS) {
                    b.headers.push(name);
                    let cells: Vec<Option<String>> = match values {
                        Value::Array(a) => a.iter().map(text).collect(),
                        Value::Object(o) => {
                            // pandas' default orient: the index as keys ("0", "1", ...).
                            let mut v: Vec<(u64, Option<String>)> = o
                                .iter()
                                .map(|(k, v)| (k.parse().unwrap_or(u64::MAX), text(v)))
                                .collect();
                            v.sort_by_key(|e| e.0);
                            v.into_iter().map(|e| e.1).collect()
                        }
                        other => bail!(
                            "{}: column {:?} is {other}, not a list of values",
                            path.display(),
                            b.headers[c]
                        ),
                    };
                    if b.rows.len() < cells.len() {
                        b.rows.resize(cells.len(), Vec::new());
                    }
                    for (r, v) in cells.into_iter().enumerate() {
                        let row = &mut b.rows[r];
                        row.resize(c, None);
                        row.push(v);
                    }
                }
            }
        }
    }
    // Every row as wide as the header (records need not have every key).
    let width = b.headers.len().min(MAX_COLUMNS);
    for r in &mut b.rows {
        r.resize(width, None);
    }
    Ok(Mem {
        headers: b.headers,
        rows: b.rows,
        typed: None,
    })
}
