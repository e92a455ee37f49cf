//! Where a skill's three outputs (table, chart, report) go: the names the request
//! mentions, else the defaults.

/// Where the three outputs go, relative to the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputNames {
    pub csv: String,
    pub png: String,
    pub md: String,
}

impl Default for OutputNames {
    fn default() -> Self {
        OutputNames {
            csv: "output/anomalies.csv".into(),
            png: "output/anomalies.png".into(),
            md: "output/report.md".into(),
        }
    }
}

/// The first `output/<name>.csv|png|md` mentioned in the task for each kind (also with
/// a `/workspace/` prefix or in sub-folders of output/); defaults for the rest.
pub(super) fn output_names(task: &str) -> OutputNames {
    let mut names = OutputNames::default();
    let (mut csv, mut png, mut md) = (false, false, false);
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || "_-./".contains(c);
    let mut from = 0;
    while let Some(pos) = task[from..].find("output/") {
        let start = from + pos;
        from = start + "output/".len();
        // Must start a path: not part of a longer word like "myoutput/".
        let before = task[..start].chars().next_back();
        if let Some(b) = before {
            if b.is_ascii_alphanumeric() || b == '_' || b == '-' || b == '.' {
                continue;
            }
            if b == '/' && !task[..start].ends_with("/workspace/") {
                continue;
            }
        }
        let end = task[start..]
            .find(|c: char| !is_name_char(c))
            .map_or(task.len(), |e| start + e);
        let path = task[start..end].trim_end_matches(['.', '/', '-']);
        if path
            .split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == "..")
        {
            continue;
        }
        let lower = path.to_ascii_lowercase();
        let stem_ok = path
            .rsplit('/')
            .next()
            .is_some_and(|f| f.len() > 4 && !f.starts_with('.'));
        if !stem_ok {
            continue;
        }
        if lower.ends_with(".csv") && !csv {
            names.csv = path.to_string();
            csv = true;
        } else if lower.ends_with(".png") && !png {
            names.png = path.to_string();
            png = true;
        } else if lower.ends_with(".md") && !md {
            names.md = path.to_string();
            md = true;
        }
    }
    names
}
