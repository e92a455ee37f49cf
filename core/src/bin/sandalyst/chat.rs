//! `chat` and `ask`: a conversation at the terminal, and the approval prompt (y/e/n/a)
//! for a call that waits for the analyst.

use super::*;

pub(crate) async fn cmd_chat(a: ChatArgs) -> anyhow::Result<u8> {
    let app = a.agent.app()?;
    let session = app.create_session(a.agent.config().await?).await?;
    eprintln!("session {} ({})", session.id(), session.dir().display());
    let printer = Printer::new(a.agent.verbose);
    watch(&app, session.id(), &printer).await?;
    // Between asks (and while files are added) an interrupt ends the chat: the
    // session is closed, its container removed.
    let quit = CancellationToken::new();
    let current = Arc::new(Mutex::new(Some(quit.clone())));
    on_signals(current.clone(), Some(quit.clone()));
    if !a.inputs.is_empty() {
        // As the desktop adds them: the notes about the folders' entries go out as
        // notices, which `watch` prints.
        let adding = app.add_files(session.id(), a.inputs.clone());
        let Some(added) = unless_cancelled(&quit, adding).await else {
            session.close().await;
            return Ok(exit::CANCELLED);
        };
        let added = added?;
        for f in &added.files {
            eprintln!("  input/{} ({} bytes)", escape(&f.name), f.bytes);
        }
        printer.printed(&added.notes).await;
    }
    let interactive = std::io::stdin().is_terminal();
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut last = RunStatus::Finished;
    // The model's note (e.g. "no model configured") is printed for the first ask only.
    let mut first = true;
    loop {
        if interactive {
            eprint!("> ");
            let _ = std::io::stderr().flush();
        }
        *current.lock().unwrap() = Some(quit.clone());
        let Some(line) = unless_cancelled(&quit, lines.next_line()).await else {
            last = RunStatus::Cancelled;
            break;
        };
        let Some(line) = line? else {
            break;
        };
        let prompt = line.trim();
        if prompt.is_empty() {
            continue;
        }
        let model = open_model(&a.agent, first)?;
        first = false;
        let handle = match app.ask(&session, prompt.to_string(), model) {
            Ok(h) => h,
            Err(e) => {
                eprintln!("error: {e}");
                continue;
            }
        };
        *current.lock().unwrap() = Some(handle.canceller());
        let outcome = follow_answering(&app, handle, &printer, &mut lines, a.output.json).await;
        *current.lock().unwrap() = None;
        last = outcome.status.clone();
        if quit.is_cancelled() {
            break;
        }
    }
    session.close().await;
    eprintln!(
        "session {} kept; continue it with `sandalyst ask {} -p ...`",
        session.id(),
        session.id()
    );
    Ok(exit::of_status(&last))
}

pub(crate) async fn cmd_ask(a: AskArgs) -> anyhow::Result<u8> {
    let app = a.agent.app()?;
    let session = app.session(&a.session).await?;
    // Before anything is printed or started: a session another process owns is
    // refused in one line (`session_busy`, exit 1).
    session.claim().await?;
    let printer = Printer::new(a.agent.verbose);
    watch(&app, session.id(), &printer).await?;
    // An interrupt while files are added closes the session (and its container).
    let quit = CancellationToken::new();
    let current = Arc::new(Mutex::new(Some(quit.clone())));
    on_ctrl_c(current.clone());
    if !a.inputs.is_empty() {
        let adding = app.add_files(session.id(), a.inputs.clone());
        let Some(added) = unless_cancelled(&quit, adding).await else {
            session.close().await;
            return Ok(exit::CANCELLED);
        };
        printer.printed(&added?.notes).await;
    }
    let model = model_for(&a.agent)?;
    let handle = app.ask(&session, a.prompt.clone(), model)?;
    *current.lock().unwrap() = Some(handle.canceller());
    if quit.is_cancelled() {
        handle.cancel();
        *current.lock().unwrap() = None;
    }
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let outcome = follow_answering(&app, handle, &printer, &mut lines, a.output.json).await;
    session.close().await;
    Ok(exit::of_status(&outcome.status))
}

type Stdin = tokio::io::Lines<tokio::io::BufReader<tokio::io::Stdin>>;

/// Print an ask's events as they come, answering each call that waits for approval
/// from `lines` (y/e/n/a); then its answer on stdout. Input that ends while a call
/// waits stops the ask: nobody is left to answer.
pub(crate) async fn follow_answering(
    app: &App,
    ask: Ask,
    printer: &Printer,
    lines: &mut Stdin,
    json: bool,
) -> AskOutcome {
    let (tx, mut waiting) = tokio::sync::mpsc::unbounded_channel();
    let p = printer.clone();
    let emit = move |ev: Event| {
        p.print(&ev);
        if let EventKind::ApprovalRequested { call_id, tool, .. } = &ev.kind {
            let _ = tx.send((CallId::from(call_id.as_str()), tool.clone()));
        }
    };
    let (session_id, stop) = (ask.session_id.clone(), ask.canceller());
    let following = ask.follow(&emit);
    tokio::pin!(following);
    let outcome = loop {
        tokio::select! {
            o = &mut following => break o,
            Some((call_id, tool)) = waiting.recv() => {
                let answer = tokio::select! {
                    a = read_answer(&tool, lines) => a,
                    o = &mut following => break o,
                };
                let Some(answer) = answer else {
                    eprintln!("\n  input ended while a call waits for approval; the ask stops");
                    stop.cancel();
                    continue;
                };
                if let Err(e) = app.answer_approval(&session_id, &call_id, answer).await {
                    eprintln!("  {}", e.message);
                }
            }
        }
    };
    print_end(&outcome, json);
    outcome
}

/// One y/e/n/a answer from the person; `None` when the input ends.
pub(crate) async fn read_answer(tool: &str, lines: &mut Stdin) -> Option<api::Answer> {
    loop {
        eprint!("  run it? [y]es, [e]dit, [n]o, [a]lways allow {tool} in this session: ");
        let _ = std::io::stderr().flush();
        let line = lines.next_line().await.ok()??;
        let (decision, always) = match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => (api::Decision::Approve, false),
            "a" | "always" => (api::Decision::Approve, true),
            "n" | "no" => {
                eprint!("  why not (the model reads this)? ");
                let _ = std::io::stderr().flush();
                let reason = lines.next_line().await.ok()??;
                let reason = match reason.trim() {
                    "" => "the analyst rejected it without a reason".to_string(),
                    r => r.to_string(),
                };
                (api::Decision::Reject { reason }, false)
            }
            "e" | "edit" => {
                eprintln!(
                    "  type the code to run instead; end it with a line holding only a dot (.)"
                );
                let mut code = Vec::new();
                loop {
                    let l = lines.next_line().await.ok()??;
                    if l.trim_end() == "." {
                        break;
                    }
                    code.push(l);
                }
                (
                    api::Decision::Edit {
                        code: code.join("\n"),
                    },
                    false,
                )
            }
            _ => continue,
        };
        return Some(api::Answer { decision, always });
    }
}

/// The ask's usage line, then its answer on stdout (with `json`, the whole result as
/// one line of JSON).
pub(crate) fn print_end(outcome: &AskOutcome, json: bool) {
    if let Some(line) = usage_line(&outcome.usage, outcome.cost_usd) {
        eprintln!("{line}");
    }
    if json {
        json::print(&json::AskResult::of_ask(outcome));
    } else if let Some(answer) = &outcome.answer {
        println!("{}", escape_lines(answer));
    }
}

/// Set-up progress of the session (engine, image, staging) as it happens.
pub(crate) async fn watch(app: &App, id: &SessionId, printer: &Printer) -> anyhow::Result<()> {
    let p = printer.clone();
    app.watch(id, move |ev| p.print(&ev)).await?;
    Ok(())
}
