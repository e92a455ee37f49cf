//! The offline analyst's skills on ordinary tables, in the real Docker sandbox: every
//! request of `tests/fixtures/skills/cases.json` (written with its files and expected
//! numbers by `tests/fixtures/skills/generate.py`, which computes them without pandas)
//! is asked in a session holding its file, and must get the expected skill, the
//! expected numbers in the answer and in the output table, the answer in the request's
//! language, and never an anomaly report. A case may also name words the report and
//! the chart must hold (the chart's words are read from the PNG's text fields, where the
//! analyst writes its title, labels and legend), and words the report must not. The
//! requests of one file share one session (one container), so later ones are follow-ups
//! on the same kernel.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sandalyst::model::offline::OfflineAnalyst;
use sandalyst::model::Item;
use sandalyst::session::{DockerFactory, Session, SessionConfig, Sessions};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("tests/fixtures/skills")
}

/// The phase of the analyst's last call in the conversation, read from its code as
/// the analyst reads it (a call's id says only which call it is).
fn last_phase(items: &[Item]) -> String {
    items
        .iter()
        .rev()
        .find_map(|i| match i {
            Item::ToolCall {
                name, arguments, ..
            } => sandalyst::analyst::call_phase(name, arguments).map(str::to_owned),
            _ => None,
        })
        .unwrap_or_default()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.01 + 1e-6 * b.abs()
}

/// Check the output table against the case's expectation; a list of problems.
fn check_table(csv_path: &Path, want: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Ok(mut rdr) = csv::Reader::from_path(csv_path) else {
        return vec![format!("no table at {}", csv_path.display())];
    };
    let headers = rdr.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    if let Some(n) = want["rows"].as_u64() {
        if rows.len() as u64 != n {
            problems.push(format!("{} rows in the table, expected {n}", rows.len()));
        }
    }
    let column = want["column"].as_str().unwrap();
    let Some(col) = headers.iter().position(|h| h == column) else {
        return vec![format!("no column {column:?} in {headers:?}")];
    };
    let row = match want["key"].as_str() {
        None => rows.first(),
        Some(key) => rows.iter().find(|r| &r[0] == key),
    };
    let Some(row) = row else {
        problems.push(format!("no row {} in the table", want["key"]));
        return problems;
    };
    let expected = want["value"].as_f64().unwrap();
    match row[col].parse::<f64>() {
        Ok(got) if close(got, expected) => {}
        _ => problems.push(format!(
            "{column} of {}: {:?}, expected {expected}",
            want["key"], &row[col]
        )),
    }
    problems
}

/// The text fields of a PNG (tEXt in Latin-1, iTXt in UTF-8), joined by lines.
fn png_text(path: &Path) -> String {
    let Ok(bytes) = std::fs::read(path) else {
        return String::new();
    };
    let mut out = String::new();
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let Some(data) = bytes.get(at + 8..at + 8 + len) else {
            break;
        };
        let mut fields = data.splitn(2, |b| *b == 0);
        let (key, rest) = (fields.next().unwrap_or(&[]), fields.next().unwrap_or(&[]));
        let text = match kind {
            b"tEXt" => rest.iter().map(|b| char::from(*b)).collect(),
            // compression flag and method, language tag, translated keyword, text
            b"iTXt" if rest.first() == Some(&0) => rest
                .get(2..)
                .and_then(|r| r.splitn(3, |b| *b == 0).nth(2))
                .map(|t| String::from_utf8_lossy(t).into_owned())
                .unwrap_or_default(),
            _ => String::new(),
        };
        if !text.is_empty() {
            out.push_str(&format!("{}: {text}\n", String::from_utf8_lossy(key)));
        }
        at += 12 + len;
    }
    out
}

/// The report and the chart of an anomaly answer against the case's words.
fn check_report_and_chart(outputs: &Path, case: &Value, ascii: bool) -> Vec<String> {
    let words = |k: &str| {
        case[k]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
    };
    let mut problems = Vec::new();
    let report = std::fs::read_to_string(outputs.join("report.md")).unwrap_or_default();
    for w in words("report") {
        if !report.contains(w) {
            problems.push(format!("the report lacks {w:?}\n--- report:\n{report}"));
        }
    }
    for w in words("report_not") {
        if report.contains(w) {
            problems.push(format!("the report has {w:?}\n--- report:\n{report}"));
        }
    }
    let chart = png_text(&outputs.join("anomalies.png"));
    for w in words("chart") {
        if !chart.contains(w) {
            problems.push(format!("the chart lacks {w:?}\n--- chart text:\n{chart}"));
        }
    }
    if ascii && !(report.is_ascii() && chart.is_ascii()) {
        problems.push("asked for ASCII, the report or the chart has other characters".into());
    }
    problems
}

/// Whether the skill's script found the table already loaded in the kernel.
fn used_loaded_table(items: &[Item]) -> Option<bool> {
    items.iter().rev().find_map(|i| match i {
        Item::ToolOutput { output, .. } => output.lines().find_map(|l| {
            let json = l.trim().strip_prefix("SANDALYST_ANSWER ")?;
            serde_json::from_str::<Value>(json).ok()?["cached"].as_bool()
        }),
        _ => None,
    })
}

/// Ask one case; `loaded`: whether the table should already be in the kernel (a
/// follow-up on a live kernel) or not (the first ask, or after the container went).
async fn ask_case(session: &Session, case: &Value, loaded: bool) -> Vec<String> {
    let request = case["request"].as_str().unwrap();
    let mut model = OfflineAnalyst::new();
    let before = session.items().len();
    let started = std::time::Instant::now();
    let outcome = session
        .ask_with(request, &mut model, None, &CancellationToken::new())
        .await
        .unwrap();
    let answer = outcome.answer.clone().unwrap_or_default();
    eprintln!(
        "{:>6.2} s  {}  {request}",
        started.elapsed().as_secs_f64(),
        case["file"].as_str().unwrap()
    );
    let mut problems = Vec::new();
    let skill = case["skill"].as_str().unwrap();
    let phase = last_phase(&session.items());
    let want_phase = match skill {
        "unsupported" => "profile",
        "anomalies" => "validate",
        other => other,
    };
    if phase != want_phase {
        problems.push(format!("skill {phase:?}, expected {want_phase:?}"));
    }
    // Clean output on the image's pandas 2 / numpy 2: no warning on stderr, and no
    // numpy 2 scalar repr (np.float64(1.5)) where a number is printed.
    let new_outputs = session.items()[before..]
        .iter()
        .filter_map(|i| match i {
            Item::ToolOutput { output, .. } => Some(output.clone()),
            _ => None,
        })
        .chain([answer.clone()])
        .collect::<Vec<_>>();
    for text in &new_outputs {
        for bad in [
            "Warning",
            "np.float64(",
            "np.int64(",
            "np.str_(",
            "np.True_",
        ] {
            if text.contains(bad) {
                problems.push(format!("{bad:?} in the output:\n{text}"));
            }
        }
    }
    let cached = used_loaded_table(&session.items());
    if skill != "anomalies" && cached != Some(loaded) {
        problems.push(format!(
            "table already loaded: {cached:?}, expected {loaded}"
        ));
    }
    for needle in case["answer"].as_array().unwrap() {
        let needle = needle.as_str().unwrap();
        if !answer.contains(needle) {
            problems.push(format!("the answer lacks {needle:?}"));
        }
    }
    let files_word = if case["lang"] == "es" {
        "Archivos:"
    } else {
        "Files:"
    };
    if !answer.contains(files_word) {
        problems.push(format!("not answered in {} ({files_word:?})", case["lang"]));
    }
    if skill != "anomalies"
        && (answer.contains("anomalies.csv") || answer.contains("abnormal events were found"))
    {
        problems.push("an anomaly report for another question".into());
    }
    if request.contains("ASCII") && !answer.is_ascii() {
        problems.push("asked for ASCII, got other characters".into());
    }
    if skill == "anomalies" {
        let ascii = request.contains("ASCII");
        problems.extend(check_report_and_chart(&outcome.outputs_dir, case, ascii));
    }
    if !case["table"].is_null() {
        let csv = match case["csv"].as_str() {
            Some(named) => named,
            None if skill == "profile" => "profile.csv",
            None => "answer.csv",
        };
        problems.extend(check_table(&outcome.outputs_dir.join(csv), &case["table"]));
    }
    problems
        .into_iter()
        .map(|p| {
            format!(
                "{} / {request:?}: {p}\n--- answer:\n{answer}\n---",
                case["file"]
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_on_ordinary_tables_get_the_right_skill_and_numbers() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = fixtures();
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cases.json")).unwrap()).unwrap();
    assert!(cases.len() >= 20);
    let engine = sandalyst::sandbox::docker::connect().await.unwrap();
    let image = sandalyst::sandbox::docker::image::ensure(&engine, &|_| {})
        .await
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let sessions =
        Arc::new(Sessions::new(data.path().to_path_buf(), Arc::new(DockerFactory)).unwrap());
    let mut files: Vec<String> = Vec::new();
    for c in &cases {
        let f = c["file"].as_str().unwrap().to_string();
        if !files.contains(&f) {
            files.push(f);
        }
    }
    // Two sessions at a time (two cores); the cases of one file in order.
    let mut problems = Vec::new();
    for pair in files.chunks(2) {
        let mut tasks = Vec::new();
        for file in pair {
            let (sessions, dir, image, file) =
                (sessions.clone(), dir.clone(), image.clone(), file.clone());
            let mine: Vec<Value> = cases
                .iter()
                .filter(|c| c["file"] == file.as_str())
                .cloned()
                .collect();
            tasks.push(tokio::spawn(async move {
                let mut config = SessionConfig::default();
                config.sandbox.image = image;
                let session = sessions.create(config).await.unwrap();
                session.add_files(vec![dir.join(&file)]).await.unwrap();
                let mut problems = Vec::new();
                for (i, case) in mine.iter().enumerate() {
                    // Follow-ups reuse the DataFrame in the kernel; before the last
                    // one the container goes (as after idling), so it reads the file
                    // again from the restored workspace.
                    let last = i + 1 == mine.len() && i > 0;
                    if last {
                        session.release().await;
                    }
                    problems.extend(ask_case(&session, case, i > 0 && !last).await);
                }
                session.close().await;
                problems
            }));
        }
        for t in tasks {
            problems.extend(t.await.unwrap());
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
