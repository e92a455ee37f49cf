//! What front ends are shown of an ask's events: the same events, with the offline
//! analyst's machine lines ([`crate::protocol::machine_lines`]) taken out of the cells'
//! output. The transcript, which the analyst's planner and re-runs read, keeps them;
//! only what goes to a front end is filtered, here, once for every front end.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::agent::{Event, EventKind};
use crate::protocol::machine_lines::{strip, LineFilter};
use crate::protocol::CallId;
use crate::sandbox::Stream;

/// The filter of one ask's event stream (the start of a line is held back per call and
/// stream while it may be a machine line).
#[derive(Default)]
pub struct Shown {
    open: Mutex<HashMap<(CallId, bool), LineFilter>>,
}

impl Shown {
    /// Pass `ev` to `emit` as a front end must see it: zero, one or two events (a
    /// call's held-back tail goes out before its result).
    pub fn pass(&self, ev: Event, emit: &(dyn Fn(Event) + Send + Sync)) {
        let Event {
            session_id,
            ask_id,
            at,
            kind,
        } = ev;
        let out = |kind| {
            emit(Event {
                session_id: session_id.clone(),
                ask_id: ask_id.clone(),
                at: at.clone(),
                kind,
            })
        };
        match kind {
            EventKind::CellOutput {
                call_id,
                stream,
                text,
            } => {
                let key = (call_id.clone(), stream == Stream::Stderr);
                let text = self
                    .open
                    .lock()
                    .unwrap()
                    .entry(key)
                    .or_default()
                    .push(&text);
                if !text.is_empty() {
                    out(EventKind::CellOutput {
                        call_id,
                        stream,
                        text,
                    });
                }
            }
            EventKind::CellResult {
                call_id,
                status,
                duration_ms,
                stdout,
                stderr,
                traceback,
                note,
            } => {
                for stream in [Stream::Stdout, Stream::Stderr] {
                    let held = self
                        .open
                        .lock()
                        .unwrap()
                        .remove(&(call_id.clone(), stream == Stream::Stderr))
                        .map(|mut f| f.finish())
                        .unwrap_or_default();
                    if !held.is_empty() {
                        out(EventKind::CellOutput {
                            call_id: call_id.clone(),
                            stream,
                            text: held,
                        });
                    }
                }
                out(EventKind::CellResult {
                    call_id,
                    status,
                    duration_ms,
                    stdout: strip(&stdout).into_owned(),
                    stderr: strip(&stderr).into_owned(),
                    traceback,
                    note,
                })
            }
            kind => out(kind),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::ExecStatus;

    fn ev(kind: EventKind) -> Event {
        Event::now("s1", Some("ask-1"), kind)
    }

    fn output(text: &str) -> EventKind {
        EventKind::CellOutput {
            call_id: "c1".into(),
            stream: Stream::Stdout,
            text: text.into(),
        }
    }

    #[test]
    fn machine_lines_never_reach_the_front_end_and_the_rest_does() {
        let shown = Shown::default();
        let got = Mutex::new(Vec::new());
        let emit = |e: Event| got.lock().unwrap().push(e);
        for chunk in [
            "Tuesday has the highest mean (77.3 kWh).\nSANDALYST_AN",
            "SWER {\"skill\": \"aggregate\", ",
            "\"ok\": true}\nSAND",
        ] {
            shown.pass(ev(output(chunk)), &emit);
        }
        shown.pass(
            ev(EventKind::CellResult {
                call_id: "c1".into(),
                status: Some(ExecStatus::Ok),
                duration_ms: 12,
                stdout: "Tuesday has the highest mean (77.3 kWh).\nSANDALYST_ANSWER {\"ok\": true}\nSAND".into(),
                stderr: String::new(),
                traceback: None,
                note: None,
            }),
            &emit,
        );
        shown.pass(
            ev(EventKind::Text {
                text: "Done.".into(),
            }),
            &emit,
        );
        let got = got.into_inner().unwrap();
        let json = serde_json::to_string(&got).unwrap();
        assert!(!json.contains("SANDALYST_ANSWER"), "{json}");
        let streamed: String = got
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::CellOutput { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(streamed, "Tuesday has the highest mean (77.3 kWh).\nSAND");
        let EventKind::CellResult { stdout, .. } = &got[got.len() - 2].kind else {
            panic!("{json}")
        };
        assert_eq!(stdout, "Tuesday has the highest mean (77.3 kWh).\nSAND");
        assert!(matches!(got.last().unwrap().kind, EventKind::Text { .. }));
        assert!(got.iter().all(|e| e.ask_id.as_deref() == Some("ask-1")));
    }
}
