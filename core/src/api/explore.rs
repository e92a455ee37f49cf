//! The data explorer for a front end: which file of a session a request names, and
//! the path the agent's Python sees it at. The work is [`crate::explore`]'s.

use std::path::Path;

use crate::explore;
pub use crate::explore::{
    Code, ColumnSummary, Filter, FilterOp, Format, PageRequest, SaveAs, SortKey, Summary, ViewPage,
    ViewSpec,
};

/// Where the sandbox's Python finds a file of the session: an input as
/// `input/<name>`; a file of the session folder by its path there, the folder of
/// outputs (`outputs/`, extracted from the sandbox's `output/`) under its name in the
/// sandbox.
pub fn python_path(rel: &str, input: bool) -> String {
    if input {
        return format!("input/{rel}");
    }
    match rel.strip_prefix(&format!("{}/", crate::store::OUTPUTS)) {
        Some(rest) => format!("output/{rest}"),
        None => rel.to_string(),
    }
}

pub fn page(file: &Path, req: PageRequest) -> anyhow::Result<ViewPage> {
    explore::page(file, req)
}

pub fn summary(file: &Path, view: &ViewSpec) -> anyhow::Result<Summary> {
    explore::summary(file, view)
}

pub fn code(file: &Path, rel: &str, input: bool, view: &ViewSpec) -> anyhow::Result<Code> {
    explore::code(file, &python_path(rel, input), view)
}

/// An input's original may be a folder the user added; the explorer reads files.
pub fn check_file(file: &Path, name: &str) -> anyhow::Result<()> {
    if !std::fs::metadata(file)?.is_file() {
        anyhow::bail!("{name} is a folder; pick one of its files");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_sees_inputs_and_outputs_where_the_sandbox_puts_them() {
        assert_eq!(python_path("orders.csv", true), "input/orders.csv");
        assert_eq!(python_path("outputs/x.csv", false), "output/x.csv");
        assert_eq!(python_path("outputs/sub/x.csv", false), "output/sub/x.csv");
        assert_eq!(python_path("other.csv", false), "other.csv");
    }

    #[test]
    fn a_request_that_does_not_fit_the_table_is_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        std::fs::write(&p, "a,n\nx,1\n").unwrap();
        let view: ViewSpec =
            serde_json::from_str(r#"{"filters": [{"column": 1, "op": "range", "min": "ten"}]}"#)
                .unwrap();
        let e = crate::api::Error::from(summary(&p, &view).unwrap_err());
        assert_eq!(e.code, "bad_input");
        assert!(e.message.contains("not a number"), "{}", e.message);
        let req = PageRequest {
            view: serde_json::from_str(r#"{"sort": [{"column": 7}]}"#).unwrap(),
            ..Default::default()
        };
        assert_eq!(
            crate::api::Error::from(page(&p, req).unwrap_err()).code,
            "bad_input"
        );
    }
}
