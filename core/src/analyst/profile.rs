//! What the inspection found (`SANDALYST_PROFILE` of `inspect.py`), and the table and
//! columns the anomaly skill analyses from it.

use serde::Deserialize;

/// Readings needed before a baseline is attempted.
pub(super) const MIN_ROWS: u64 = 24;

/// Every file under `input/` and every table the inspection could read.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Profile {
    pub files: Vec<FileEntry>,
    pub tables: Vec<Table>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct FileEntry {
    pub path: String,
    pub kind: Option<String>,
    pub status: String,
    pub reason: Option<String>,
    pub size: u64,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Table {
    pub path: String,
    pub sheet: Option<String>,
    pub kind: Option<String>,
    pub rows: u64,
    pub column_names: Vec<String>,
    pub time: Vec<TimeCandidate>,
    pub measures: Vec<Measure>,
    pub temperature: Option<Temperature>,
    pub categories: Vec<Category>,
    pub time_span: Option<TimeSpan>,
    /// Every column's kind (numeric, datetime, text, bool), distinct and missing counts.
    pub column_kinds: Vec<ColumnKind>,
    /// How a delimited file was read (see `read_delimited` in `common.py`).
    pub read: Option<Read>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Read {
    pub sep: String,
    pub encoding: String,
    pub decimal: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct ColumnKind {
    pub name: String,
    pub kind: String,
    pub distinct: u64,
    pub missing: u64,
    /// An identifier (a code or a row number), never a measure.
    pub id: bool,
    /// The values of a column with few of them (at most 50), as text.
    pub values: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct TimeCandidate {
    pub name: String,
    pub unit: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Measure {
    pub name: String,
    pub unit: String,
    pub kind: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Temperature {
    pub name: String,
    pub unit: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Category {
    pub name: String,
    pub distinct: u64,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct TimeSpan {
    pub duplicates: u64,
}

/// What the analysis step will look at.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub table: Table,
    pub time: TimeCandidate,
    pub measure: Measure,
    pub category: Option<String>,
}

/// Why there is nothing to analyse ([`anomalies::no_target_text`] says it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NoTarget {
    /// No file under input/.
    EmptyInput,
    /// Files, but no table could be read.
    NoReadableTable,
    /// Tables, but none with a time column, a numeric measure and enough rows.
    NoTimeSeries,
}

/// Pick the table and columns to analyse, or say why there is nothing to analyse.
pub(super) fn choose_target(profile: &Profile, task: &str) -> Result<Target, NoTarget> {
    let task_lower = task.to_lowercase();
    let mentioned = |name: &str| name.len() >= 3 && task_lower.contains(&name.to_lowercase());
    if profile.files.is_empty() {
        return Err(NoTarget::EmptyInput);
    }
    if profile.tables.is_empty() {
        return Err(NoTarget::NoReadableTable);
    }
    let usable: Vec<&Table> = profile
        .tables
        .iter()
        .filter(|t| !t.time.is_empty() && !t.measures.is_empty() && t.rows >= MIN_ROWS)
        .collect();
    if usable.is_empty() {
        return Err(NoTarget::NoTimeSeries);
    }
    let file_mentioned = |t: &Table| {
        let base = t.path.rsplit('/').next().unwrap_or(&t.path);
        mentioned(base)
    };
    let table = usable
        .iter()
        .copied()
        .filter(|t| file_mentioned(t))
        .max_by_key(|t| t.rows)
        .or_else(|| {
            // Most rows wins; the first listed on a tie.
            usable.iter().copied().rev().max_by_key(|t| t.rows)
        })
        .expect("usable is not empty");
    let measure = table
        .measures
        .iter()
        .find(|m| mentioned(&m.name))
        .unwrap_or(&table.measures[0])
        .clone();
    // Several entities (sites, meters) in one long table: duplicated timestamps plus a
    // category column. The analysis then keeps the most frequent entity.
    let dups = table.time_span.as_ref().map_or(0, |s| s.duplicates);
    let category = if dups * 10 >= table.rows.max(1) {
        table
            .categories
            .iter()
            .find(|c| (2..=50).contains(&c.distinct))
            .map(|c| c.name.clone())
    } else {
        None
    };
    Ok(Target {
        table: table.clone(),
        time: table.time[0].clone(),
        measure,
        category,
    })
}
