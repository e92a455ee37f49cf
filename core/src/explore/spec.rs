//! What a front end asks the explorer for: a view (filters and a sort) and a page of
//! it, and the checks every field passes where it enters the core.
//!
//! The page sends these as JSON; nothing in them is trusted. [`ViewSpec::check`] bounds
//! every list and text and checks each column and bound against the table, and says
//! what is wrong in a sentence the person can act on (a typed `bad_input` error).

use serde::{Deserialize, Serialize};

use super::cell::{self, Kind};

/// A request that does not fit the table or the bounds, said for the person; the API
/// gives it the code `bad_input`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

impl BadInput {
    pub fn new(message: impl Into<String>) -> BadInput {
        BadInput(message.into())
    }
}

/// At most this many filters in a view.
pub const MAX_FILTERS: usize = 32;
/// At most this many sort keys.
pub const MAX_SORT_KEYS: usize = 8;
/// At most this many values in one `values` filter.
pub const MAX_VALUES: usize = 10_000;
/// Any text of a request (a value, a bound, a search) is at most this many bytes.
pub const MAX_TEXT_BYTES: usize = 1_000;
/// A sheet name is at most this many bytes.
pub const MAX_SHEET_BYTES: usize = 256;

/// Which rows of a table to keep (every filter, combined with AND) and in which order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ViewSpec {
    /// The sheet of a workbook (`None`: the first one); ignored for other formats.
    #[serde(default)]
    pub sheet: Option<String>,
    #[serde(default)]
    pub filters: Vec<Filter>,
    #[serde(default)]
    pub sort: Vec<SortKey>,
}

/// One condition on one column (0-based).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Filter {
    pub column: usize,
    #[serde(flatten)]
    pub op: FilterOp,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum FilterOp {
    /// The cell is one of `values` (as text; in a numeric column also by value, in a
    /// date column by the instant); `""` stands for a missing cell.
    Values {
        values: Vec<String>,
    },
    /// Between `min` and `max`, inclusive; either may be absent. Numbers in a numeric
    /// column, ISO dates or datetimes in a date column (a date as `max` takes its whole
    /// day), text compared by bytes otherwise. Missing cells never pass.
    Range {
        #[serde(default)]
        min: Option<String>,
        #[serde(default)]
        max: Option<String>,
    },
    /// The cell's text holds `text`, ignoring case (both upper-cased, as pandas'
    /// `str.contains(case=False)` does).
    Contains {
        text: String,
    },
    Missing,
    NotMissing,
}

/// One sort key: a column, ascending unless `descending`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SortKey {
    pub column: usize,
    #[serde(default)]
    pub descending: bool,
}

/// A page of a view: view rows `offset..offset + limit` (`limit` 200 unless given,
/// capped at `table::MAX_PAGE_ROWS`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageRequest {
    #[serde(default)]
    pub view: ViewSpec,
    #[serde(default)]
    pub offset: usize,
    #[serde(default = "default_limit")]
    pub limit: usize,
}

fn default_limit() -> usize {
    200
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest {
            view: ViewSpec::default(),
            offset: 0,
            limit: default_limit(),
        }
    }
}

fn text(what: &str, t: &str) -> Result<(), BadInput> {
    if t.len() > MAX_TEXT_BYTES {
        return Err(BadInput::new(format!(
            "{what} is longer than {MAX_TEXT_BYTES} bytes; shorten it"
        )));
    }
    Ok(())
}

impl ViewSpec {
    /// The bounds that need no table: list lengths and text sizes.
    pub fn check_shape(&self) -> Result<(), BadInput> {
        if let Some(s) = &self.sheet {
            if s.len() > MAX_SHEET_BYTES {
                return Err(BadInput::new("that sheet name is too long"));
            }
        }
        if self.filters.len() > MAX_FILTERS {
            return Err(BadInput::new(format!(
                "a view takes at most {MAX_FILTERS} filters; remove some"
            )));
        }
        if self.sort.len() > MAX_SORT_KEYS {
            return Err(BadInput::new(format!(
                "a view sorts by at most {MAX_SORT_KEYS} columns; remove some"
            )));
        }
        for f in &self.filters {
            match &f.op {
                FilterOp::Values { values } => {
                    if values.is_empty() {
                        return Err(BadInput::new(
                            "a values filter needs at least one value; pick one or remove the filter",
                        ));
                    }
                    if values.len() > MAX_VALUES {
                        return Err(BadInput::new(format!(
                            "a values filter takes at most {MAX_VALUES} values; pick fewer"
                        )));
                    }
                    for v in values {
                        text("a filter value", v)?;
                    }
                }
                FilterOp::Range { min, max } => {
                    if min.is_none() && max.is_none() {
                        return Err(BadInput::new(
                            "a range filter needs a lower or an upper bound",
                        ));
                    }
                    for b in [min, max].into_iter().flatten() {
                        text("a range bound", b)?;
                    }
                }
                FilterOp::Contains { text: t } => {
                    text("the search text", t)?;
                    if t.is_empty() {
                        return Err(BadInput::new(
                            "a contains filter needs some text to look for",
                        ));
                    }
                }
                FilterOp::Missing | FilterOp::NotMissing => {}
            }
        }
        Ok(())
    }

    /// Every check, against a table with these column names and kinds.
    pub fn check(
        &self,
        headers: &[String],
        kinds: &[Kind],
        decimal_comma: bool,
    ) -> Result<(), BadInput> {
        self.check_shape()?;
        let column = |c: usize| -> Result<(), BadInput> {
            if c >= headers.len() {
                return Err(BadInput::new(format!(
                    "the table has {} columns, so there is no column {}; reload the table",
                    headers.len(),
                    c + 1
                )));
            }
            Ok(())
        };
        for f in &self.filters {
            column(f.column)?;
            if let FilterOp::Range { min, max } = &f.op {
                let kind = kinds.get(f.column).copied().unwrap_or(Kind::Text);
                for b in [min, max].into_iter().flatten() {
                    let name = &headers[f.column];
                    if kind.is_numeric() && bound_number(b, decimal_comma).is_none() {
                        return Err(BadInput::new(format!(
                            "{name} holds numbers, and {b:?} is not a number; give a number such as 10 or 2.5"
                        )));
                    }
                    if kind.is_temporal() && cell::instant(b.as_bytes()).is_none() {
                        return Err(BadInput::new(format!(
                            "{name} holds dates, and {b:?} is not an ISO date; give one such as 2024-01-31 or 2024-01-31T12:00"
                        )));
                    }
                }
            }
        }
        for s in &self.sort {
            column(s.column)?;
        }
        Ok(())
    }
}

/// A number typed as a bound: either decimal separator is accepted.
pub fn bound_number(b: &str, decimal_comma: bool) -> Option<f64> {
    cell::number(b.as_bytes(), false)
        .or_else(|| cell::number(b.as_bytes(), true).filter(|_| decimal_comma || b.contains(',')))
        .filter(|n| n.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract_parses() {
        let json = r#"{ "sheet": null,
          "filters": [ {"column": 2, "op": "values", "values": ["Centro", "Norte"]},
                       {"column": 3, "op": "range", "min": "10", "max": "20"},
                       {"column": 1, "op": "contains", "text": "abc"},
                       {"column": 4, "op": "missing"},
                       {"column": 4, "op": "not_missing"},
                       {"column": 3, "op": "range", "min": null} ],
          "sort": [ {"column": 0, "descending": false}, {"column": 3, "descending": true} ] }"#;
        let v: ViewSpec = serde_json::from_str(json).unwrap();
        assert_eq!(v.filters.len(), 6);
        assert_eq!(v.filters[3].op, FilterOp::Missing);
        assert_eq!(
            v.filters[1].op,
            FilterOp::Range {
                min: Some("10".into()),
                max: Some("20".into())
            }
        );
        assert!(v.sort[1].descending);
        let back: ViewSpec = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
        assert_eq!(back, v);
        let p: PageRequest = serde_json::from_str(r#"{"view": {}, "offset": 5}"#).unwrap();
        assert_eq!((p.offset, p.limit), (5, 200));
    }

    #[test]
    fn bad_requests_say_what_to_do() {
        let headers = vec!["a".to_string(), "n".to_string()];
        let kinds = [Kind::Text, Kind::Integer];
        let check = |json: &str| {
            let v: ViewSpec = serde_json::from_str(json).unwrap();
            v.check(&headers, &kinds, false)
        };
        let e = check(r#"{"filters": [{"column": 9, "op": "missing"}]}"#).unwrap_err();
        assert!(e.0.contains("no column 10"), "{}", e.0);
        let e = check(r#"{"filters": [{"column": 1, "op": "range", "min": "ten"}]}"#).unwrap_err();
        assert!(e.0.contains("not a number"), "{}", e.0);
        assert!(check(r#"{"filters": [{"column": 0, "op": "range", "min": "ten"}]}"#).is_ok());
        assert!(check(r#"{"filters": [{"column": 1, "op": "range"}]}"#).is_err());
        assert!(check(r#"{"filters": [{"column": 1, "op": "values", "values": []}]}"#).is_err());
        assert!(check(r#"{"sort": [{"column": 2}]}"#).is_err());
        let many = format!(
            r#"{{"filters": [{}]}}"#,
            vec![r#"{"column": 0, "op": "missing"}"#; 33].join(",")
        );
        assert!(check(&many).unwrap_err().0.contains("at most 32"));
        let long = format!(
            r#"{{"filters": [{{"column": 0, "op": "contains", "text": "{}"}}]}}"#,
            "x".repeat(2000)
        );
        assert!(check(&long).is_err());
        assert!(
            serde_json::from_str::<ViewSpec>(r#"{"filters": [{"column": 0, "op": "nope"}]}"#)
                .is_err()
        );
        assert_eq!(bound_number("2,5", false), Some(2.5));
    }
}
