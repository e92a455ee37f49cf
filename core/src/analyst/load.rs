//! The inputs' profile for an LLM, and the cell that loads them before its first turn:
//! pandas, numpy and pyplot imported and each table the inspection read put in a
//! DataFrame (`df` when there is one), read the way the inspection read it (separator,
//! encoding, decimal mark; the time column parsed). A small model's first call then
//! works on `df` instead of spending turns on imports and `read_csv`, and a reply cut
//! before its imports leaves nothing undefined. The cell is kept as a call like any
//! other, so notebooks and re-runs replay it.

use super::profile::{Profile, Table};
use super::transcript::tagged_json;
use crate::explore::code::py_literal;

/// Tables loaded at most; the rest the model reads itself (the profile names them).
const MAX_LOADED: usize = 8;
/// Bytes of input files loaded at most, all tables together: the kernel's memory is
/// the model's too.
const MAX_LOADED_BYTES: u64 = 256 << 20;

/// What the profile run printed, split: the text for the model, and the load cell
/// (`None` when no table can be loaded as the inspection read it).
pub struct InputProfile {
    pub text: String,
    pub load_cell: Option<String>,
}

/// Read the stdout of [`super::input_profile_code`].
pub fn input_profile(stdout: &str) -> InputProfile {
    let text = stdout
        .lines()
        .filter(|l| !l.trim_start().starts_with(PROFILE_TAG))
        .collect::<Vec<_>>()
        .join("\n");
    let profile = tagged_json(stdout, PROFILE_TAG)
        .and_then(|v| serde_json::from_value::<Profile>(v).ok())
        .unwrap_or_default();
    InputProfile {
        text,
        load_cell: load_cell(&profile),
    }
}

const PROFILE_TAG: &str = "SANDALYST_PROFILE";

/// The cell, or `None` when no table qualifies.
fn load_cell(profile: &Profile) -> Option<String> {
    let size = |t: &Table| {
        profile
            .files
            .iter()
            .find(|f| f.path == t.path)
            .map_or(u64::MAX, |f| f.size)
    };
    let mut budget = MAX_LOADED_BYTES;
    let mut loads = Vec::new();
    for table in &profile.tables {
        if loads.len() == MAX_LOADED {
            break;
        }
        let Some(read) = read_call(table) else {
            continue;
        };
        // A file of several sheets counts once against the budget, at its first sheet.
        let first_sheet = !loads
            .iter()
            .any(|(t, _): &(&Table, String)| t.path == table.path);
        if first_sheet {
            if size(table) > budget {
                continue;
            }
            budget -= size(table);
        }
        loads.push((table, read));
    }
    if loads.is_empty() {
        return None;
    }
    let names = variable_names(&loads.iter().map(|(t, _)| *t).collect::<Vec<_>>());
    let mut code =
        String::from("import pandas as pd\nimport numpy as np\nimport matplotlib.pyplot as plt\n");
    for ((_, read), name) in loads.iter().zip(&names) {
        code.push_str(&format!("{name} = {read}\n"));
    }
    for ((table, _), name) in loads.iter().zip(&names) {
        code.push_str(&format!(
            "print({}, {name}.shape, {name}.dtypes.astype(str).to_dict())\n",
            py_str(&format!("{name} = {}:", label(table)))
        ));
    }
    Some(code)
}

/// The pandas call that reads `table` as the inspection did; `None` for a kind it
/// read some other way (JSON normalised from nested objects, say).
fn read_call(table: &Table) -> Option<String> {
    let path = py_str(&table.path);
    let kind = table.kind.as_deref().unwrap_or("csv");
    match kind {
        "csv" | "tsv" | "text" => {
            let read = table.read.as_ref()?;
            let mut args = vec![path];
            if read.sep != "," {
                args.push(format!("sep={}", py_str(&read.sep)));
            }
            if read.decimal != "." {
                args.push(format!("decimal={}", py_str(&read.decimal)));
            }
            if read.encoding != "utf-8-sig" && read.encoding != "utf-8" {
                args.push(format!("encoding={}", py_str(&read.encoding)));
            }
            // Text dates become datetimes; numbers (epoch seconds) stay as they are.
            let dates: Vec<String> = table
                .column_kinds
                .iter()
                .filter(|c| c.kind == "datetime" && table.time.iter().any(|t| t.name == c.name))
                .map(|c| py_str(&c.name))
                .collect();
            if !dates.is_empty() {
                args.push(format!("parse_dates=[{}]", dates.join(", ")));
            }
            args.push("low_memory=False".into());
            Some(format!("pd.read_csv({})", args.join(", ")))
        }
        "excel" => Some(match &table.sheet {
            Some(sheet) => format!("pd.read_excel({path}, sheet_name={})", py_str(sheet)),
            None => format!("pd.read_excel({path})"),
        }),
        "parquet" => Some(format!("pd.read_parquet({path})")),
        "jsonl" => Some(format!("pd.read_json({path}, lines=True)")),
        _ => None,
    }
}

/// `df` for one table; else `df_` and the file's stem (and sheet), as an identifier,
/// each name once.
fn variable_names(tables: &[&Table]) -> Vec<String> {
    if tables.len() == 1 {
        return vec!["df".into()];
    }
    let mut names: Vec<String> = Vec::new();
    for t in tables {
        let file = t.path.rsplit('/').next().unwrap_or(&t.path);
        let stem = file.split('.').next().unwrap_or(file);
        let mut raw = stem.to_string();
        if let Some(sheet) = &t.sheet {
            raw = format!("{raw}_{sheet}");
        }
        let ident = raw
            .to_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join("_");
        let mut name = format!("df_{ident}");
        let mut n = 2;
        while names.contains(&name) {
            name = format!("df_{ident}_{n}");
            n += 1;
        }
        names.push(name);
    }
    names
}

/// A Python string literal in single quotes: this cell is the model's first example
/// of code, and a small model copies it into a JSON string where an unescaped `"`
/// ends the string.
fn py_str(s: &str) -> String {
    py_literal(s, '\'')
}

/// The table as its loading line names it.
fn label(t: &Table) -> String {
    match &t.sheet {
        Some(sheet) => format!("{} [sheet {sheet}]", t.path),
        None => t.path.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdout(tables: serde_json::Value) -> String {
        format!(
            "Input files (1):\n== input/a.csv (csv) ==\nrows: 3\nSANDALYST_PROFILE {}\n",
            serde_json::json!({"files": [
                {"path": "input/a.csv", "size": 100, "kind": "csv", "status": "ok"},
                {"path": "input/b data.csv", "size": 100, "kind": "csv", "status": "ok"},
                {"path": "input/big.parquet", "size": 300u64 << 20, "kind": "parquet", "status": "ok"},
                {"path": "input/c.xlsx", "size": 100, "kind": "excel", "status": "ok"}
            ], "tables": tables})
        )
    }

    #[test]
    fn one_table_becomes_df_read_as_the_inspection_read_it() {
        let out = stdout(serde_json::json!([{
            "path": "input/a.csv", "kind": "csv",
            "read": {"sep": ";", "encoding": "latin-1", "decimal": ","},
            "time": [{"name": "ts"}],
            "column_kinds": [{"name": "ts", "kind": "datetime"}, {"name": "when", "kind": "datetime"}]
        }]));
        let p = input_profile(&out);
        // The machine line is not for the model.
        assert!(!p.text.contains("SANDALYST_PROFILE"), "{}", p.text);
        assert!(p.text.contains("rows: 3"));
        assert_eq!(
            p.load_cell.unwrap(),
            "import pandas as pd\nimport numpy as np\nimport matplotlib.pyplot as plt\n\
             df = pd.read_csv('input/a.csv', sep=';', decimal=',', encoding='latin-1', parse_dates=['ts'], low_memory=False)\n\
             print('df = input/a.csv:', df.shape, df.dtypes.astype(str).to_dict())\n"
        );
    }

    #[test]
    fn several_tables_get_names_of_their_own_within_a_budget() {
        let out = stdout(serde_json::json!([
            {"path": "input/a.csv", "kind": "csv", "read": {"sep": ",", "encoding": "utf-8-sig", "decimal": "."}},
            {"path": "input/b data.csv", "kind": "csv", "read": {"sep": "\t", "encoding": "utf-8-sig", "decimal": "."}},
            {"path": "input/big.parquet", "kind": "parquet"},
            {"path": "input/c.xlsx", "kind": "excel", "sheet": "Q1 \"x\""},
            {"path": "input/c.xlsx", "kind": "excel", "sheet": "Q2"},
            // Read by pandas in a way a one-line call cannot repeat: left to the model.
            {"path": "input/d.json", "kind": "json"}
        ]));
        let cell = input_profile(&out).load_cell.unwrap();
        assert!(
            cell.contains("df_a = pd.read_csv('input/a.csv', low_memory=False)\n"),
            "{cell}"
        );
        assert!(
            cell.contains(
                "df_b_data = pd.read_csv('input/b data.csv', sep='\\t', low_memory=False)\n"
            ),
            "{cell}"
        );
        assert!(
            cell.contains("df_c_q1_x = pd.read_excel('input/c.xlsx', sheet_name='Q1 \"x\"')\n"),
            "{cell}"
        );
        assert!(
            cell.contains("df_c_q2 = pd.read_excel('input/c.xlsx', sheet_name='Q2')\n"),
            "{cell}"
        );
        // Over the bytes budget, and a kind without a one-line read: not loaded.
        assert!(
            !cell.contains("big.parquet") && !cell.contains("d.json"),
            "{cell}"
        );
        // A CSV whose read is unknown (an older inspection) is not guessed.
        let unknown = stdout(serde_json::json!([{"path": "input/a.csv", "kind": "csv"}]));
        assert!(input_profile(&unknown).load_cell.is_none());
        assert!(input_profile("no profile at all").load_cell.is_none());
    }
}
