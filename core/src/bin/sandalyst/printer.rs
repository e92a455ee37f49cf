//! Events as progress lines on stderr, escaped for the terminal.

use super::*;

/// Events as progress lines on stderr. Deltas are not printed: the complete text
/// and code follow them.
#[derive(Clone)]
pub(crate) struct Printer {
    pub(crate) verbose: bool,
    /// The notes about added folders' entries printed so far.
    said: Arc<Mutex<Vec<InputNote>>>,
}

/// How long [`Printer::printed`] waits for the session's notes at most.
const NOTES_WAIT: Duration = Duration::from_secs(10);

impl Printer {
    pub(crate) fn new(verbose: bool) -> Printer {
        Printer {
            verbose,
            said: Default::default(),
        }
    }

    /// Everything printed passes [`escape_lines`] (names, model text and outputs come
    /// from the model and its code); single-line names are escaped whole.
    pub(crate) fn print(&self, ev: &Event) {
        let mut buf = Vec::new();
        self.write(ev, &mut buf);
        let text = String::from_utf8_lossy(&buf);
        let _ = std::io::stderr()
            .lock()
            .write_all(escape_lines(&text).as_bytes());
        if let (None, EventKind::Notice(Notice::InputNote(note))) = (&ev.ask_id, &ev.kind) {
            self.said.lock().unwrap().push(note.clone());
        }
    }

    /// Wait until the session's notices for `notes` (an add's, which the session
    /// says as it adds) have been printed by the watch (bounded), so a chat or ask
    /// that ends at once still shows what was left out.
    pub(crate) async fn printed(&self, notes: &[InputNote]) {
        let start = std::time::Instant::now();
        while start.elapsed() < NOTES_WAIT {
            let done = {
                let said = self.said.lock().unwrap();
                notes.iter().all(|n| said.contains(n))
            };
            if done {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    pub(crate) fn write(&self, ev: &Event, err: &mut Vec<u8>) {
        let v = self.verbose;
        let _ = match &ev.kind {
            EventKind::Setup(stage) => match stage {
                SetupStage::Engine { name, version, .. } => {
                    writeln!(err, "  engine: {name} {version}")
                }
                SetupStage::LeftoversRemoved { count } => writeln!(
                    err,
                    "  removed {count} container(s) left by an earlier run that did not end cleanly"
                ),
                SetupStage::ImageBuild { line, .. } => writeln!(err, "  image: {line}"),
                SetupStage::ImageReady { .. } | SetupStage::ContainerStarting => Ok(()),
                SetupStage::Staging { files, bytes } => {
                    writeln!(err, "  staging {files} input file(s), {bytes} bytes")
                }
                SetupStage::Staged {
                    method,
                    files,
                    bytes,
                    reason,
                } => match reason {
                    Some(why) => {
                        writeln!(err, "  {method}: {files} file(s), {bytes} bytes ({why})")
                    }
                    None => writeln!(err, "  {method}: {files} file(s), {bytes} bytes"),
                },
                SetupStage::SandboxReady {
                    millis,
                    warm_for_ms: None,
                } => {
                    writeln!(err, "  sandbox ready in {millis} ms")
                }
                SetupStage::SandboxReady {
                    millis,
                    warm_for_ms: Some(warm),
                } => writeln!(
                    err,
                    "  sandbox warm: ready for {:.1} s (its start took {millis} ms)",
                    *warm as f64 / 1000.0
                ),
                SetupStage::WorkspaceRestored => writeln!(err, "  earlier workspace restored"),
                SetupStage::SandboxReleased => writeln!(err, "  sandbox released (idle)"),
            },
            EventKind::Status { message } => writeln!(err, "  {message}"),
            EventKind::Notice(n) => writeln!(err, "  {n}"),
            EventKind::OutputsRefused { count, refused } => {
                for r in refused {
                    let _ = writeln!(err, "  refused output {}: {}", r.path, r.reason);
                }
                match count.saturating_sub(refused.len()) {
                    0 => Ok(()),
                    more => writeln!(
                        err,
                        "  ... and {more} more refused output(s) (all listed in run.json)"
                    ),
                }
            }
            EventKind::Egress { connection, .. } => network_line(connection, v, err),
            EventKind::AskStarted { model, .. } => writeln!(
                err,
                "ask {} started in session {} ({model})",
                ev.ask_id.as_deref().unwrap_or(""),
                ev.session_id
            ),
            EventKind::TurnStarted { turn, max_turns } => writeln!(err, "turn {turn}/{max_turns}"),
            EventKind::Text { text } => writeln!(err, "  assistant: {}", indent(text, v, 12)),
            EventKind::ToolCall {
                name, code, form, ..
            } => {
                // With -v: which calls the model wrote as text and the app read.
                let how = if v && *form == api::CallForm::Text {
                    " (written in the reply's text, recovered)"
                } else {
                    ""
                };
                writeln!(err, "  {}{how}: {}", escape(name), indent(code, v, 3))
            }
            EventKind::CallMode { mode, reason } if v => {
                writeln!(err, "  calls: {} ({})", mode.name(), escape(reason))
            }
            EventKind::CallMode { .. } => Ok(()),
            EventKind::InputsProfiled {
                tables,
                duration_ms,
                failed,
            } => match failed {
                None => writeln!(
                    err,
                    "  inputs profiled for the model: {tables} table(s) in {:.1} s",
                    *duration_ms as f64 / 1000.0
                ),
                Some(why) => writeln!(
                    err,
                    "  the inputs could not be profiled ({}); the model reads them itself",
                    escape(why)
                ),
            },
            EventKind::NothingRan { reason } => {
                writeln!(
                    err,
                    "  nothing ran: {reason}; the model is told how to call a tool"
                )
            }
            // The whole code, verbose or not: a person is about to decide on it.
            EventKind::ApprovalRequested { tool, code, .. } => writeln!(
                err,
                "  {} call waits for your approval:\n      {}",
                escape(tool),
                indent(code, true, 0)
            ),
            EventKind::ApprovalResolved {
                resolution,
                reason,
                always,
                ..
            } => writeln!(
                err,
                "  -> {}{}{}",
                resolution.as_str(),
                reason
                    .as_ref()
                    .map(|r| format!(": {}", escape(r)))
                    .unwrap_or_default(),
                if *always {
                    " (this tool runs without asking for the rest of the session)"
                } else {
                    ""
                }
            ),
            EventKind::CellOutput { .. } if !v => Ok(()),
            EventKind::CellOutput { text, .. } => write!(err, "{text}"),
            EventKind::CellImage { path, .. } => writeln!(err, "  figure: {}", escape(path)),
            EventKind::CellResult {
                status,
                duration_ms,
                stdout,
                stderr,
                traceback,
                note,
                ..
            } => {
                let status =
                    status.map_or("refused".to_string(), |s| format!("{s:?}").to_lowercase());
                let mut shown = stdout.clone();
                for extra in [
                    stderr,
                    traceback.as_ref().unwrap_or(&String::new()),
                    note.as_ref().unwrap_or(&String::new()),
                ] {
                    if !extra.is_empty() {
                        shown.push('\n');
                        shown.push_str(extra);
                    }
                }
                writeln!(
                    err,
                    "  -> {status} ({:.2} s) {}",
                    *duration_ms as f64 / 1000.0,
                    indent(&shown, v, 4)
                )
            }
            EventKind::Artifact { path, bytes, .. } => {
                writeln!(err, "  wrote output/{} ({bytes} bytes)", escape(path))
            }
            EventKind::Usage { .. }
            | EventKind::TextDelta { .. }
            | EventKind::ToolCallDelta { .. } => Ok(()),
            // Asked again at once: not a failure (the call mode changed).
            EventKind::Retry {
                wait_ms: 0, reason, ..
            } => writeln!(err, "  {reason}"),
            EventKind::Retry {
                attempt,
                wait_ms,
                reason,
            } => writeln!(
                err,
                "  the model's provider failed ({reason}); attempt {attempt} in {:.1} s",
                *wait_ms as f64 / 1000.0
            ),
            EventKind::Error { error } => {
                writeln!(err, "  error ({}): {}", error.code, error.message)
            }
            EventKind::AskFinished { status, .. } => writeln!(err, "ask {status}"),
        };
    }
}

/// The first `lines` lines (all when verbose), indented under the label.
pub(crate) fn indent(text: &str, verbose: bool, lines: usize) -> String {
    let all: Vec<&str> = text.trim_end().lines().collect();
    let shown = if verbose {
        all.len()
    } else {
        lines.min(all.len())
    };
    let mut s = all[..shown].join("\n      ");
    if shown < all.len() {
        s.push_str(&format!(
            "\n      ... ({} more lines; -v shows all)",
            all.len() - shown
        ));
    }
    s
}

/// One connection through the allowlist proxy: refusals always, the rest with -v.
pub(crate) fn network_line(
    c: &api::EgressEvent,
    verbose: bool,
    err: &mut Vec<u8>,
) -> std::io::Result<()> {
    let target = match c.host.as_str() {
        "" => "a request it could not read".to_string(),
        h if h.contains(':') => format!("[{}]:{}", escape(h), c.port),
        h => format!("{}:{}", escape(h), c.port),
    };
    match &c.kind {
        api::EgressKind::Refused { reason } => {
            writeln!(err, "  network: refused {target}: {reason}")
        }
        api::EgressKind::Allowed { addr } if verbose => {
            writeln!(err, "  network: {target} let through (to {addr})")
        }
        api::EgressKind::Closed {
            bytes_up,
            bytes_down,
        } if verbose => writeln!(
            err,
            "  network: {target} closed ({bytes_up} bytes sent, {bytes_down} received)"
        ),
        _ => Ok(()),
    }
}
