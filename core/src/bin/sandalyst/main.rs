//! The `sandalyst` command line: a thin shell over the core. Progress goes to
//! stderr, results (the outputs' location, listings) to stdout.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use sandalyst::api::engine::{BuildLine, BuildRequest};
use sandalyst::api::settings::{Choices, Configured, Flags};
use sandalyst::api::{
    self, usage_line, App, Ask, AskOutcome, CallId, Event, EventKind, InputNote, Notice,
    RunRequest, RunStatus, SessionConfig, SessionId, SetupStage,
};
use sandalyst::api::{escape, escape_lines};
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

mod args;
mod chat;
mod exit;
mod json;
mod printer;
mod signals;

use args::*;
use chat::*;
use printer::*;
use signals::*;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let logging = api::logs::init(api::logs::Options {
        shell: "cli",
        stderr: cli.command.verbose(),
    });
    if let Some(problem) = &logging.problem {
        eprintln!("note: {}", escape(problem));
    }
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        command = cli.command.name(),
        "sandalyst started"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the async runtime starts");
    let code = runtime.block_on(run_command(cli));
    // Blocking work still under way (a hash, a read of a slow disk) does not keep
    // the process once the command is done.
    runtime.shutdown_timeout(Duration::from_millis(500));
    code
}

async fn run_command(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Run(args) => cmd_run(args).await,
        Command::Chat(args) => cmd_chat(args).await,
        Command::Ask(args) => cmd_ask(args).await,
        Command::Image(cmd) => cmd_image(cmd).await,
        Command::Runs(cmd) => cmd_runs(cmd).await,
        Command::Models(a) => cmd_models(a).await,
        Command::Rerun(args) => cmd_rerun(args).await,
        Command::Completions { shell } => cmd_completions(shell),
        Command::Man { dir } => cmd_man(dir),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let code = exit::of_error(&e);
            tracing::warn!(exit_code = code, "the command failed: {e:#}");
            if code == exit::CANCELLED {
                eprintln!("cancelled");
            } else {
                eprintln!("error: {}", escape_lines(&format!("{e:#}")));
            }
            ExitCode::from(code)
        }
    }
}

/// The command line as clap builds it, help included: what completions and man
/// pages are made from.
fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

fn cmd_completions(shell: clap_complete::Shell) -> anyhow::Result<u8> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut command(), "sandalyst", &mut buf);
    write_stdout_raw(&buf);
    Ok(exit::DONE)
}

/// The man page on stdout, or with `dir` one page per command there
/// (`sandalyst.1`, `sandalyst-run.1`, ...), as `scripts/package.sh` installs them.
fn cmd_man(dir: Option<PathBuf>) -> anyhow::Result<u8> {
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(command(), &dir)
                .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
            println!("{}", escape(&dir.display().to_string()));
        }
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(command()).render(&mut buf)?;
            write_stdout_raw(&buf);
        }
    }
    Ok(exit::DONE)
}

fn open_app(dir: Option<PathBuf>) -> anyhow::Result<App> {
    App::open(api::data_root(dir)?)
}

/// The model from --model/--base-url, the environment, the config file and the keychain.
fn model_for(a: &AgentArgs) -> anyhow::Result<Box<dyn api::Model>> {
    open_model(a, true)
}

/// The model, saying why it is the offline analyst when `say_why`.
fn open_model(a: &AgentArgs, say_why: bool) -> anyhow::Result<Box<dyn api::Model>> {
    let (model, why) = a.flags().model()?;
    if let (Some(why), true) = (why, say_why) {
        eprintln!("note: {why}");
    }
    Ok(model)
}

async fn cmd_run(a: RunArgs) -> anyhow::Result<u8> {
    let prompt = match (&a.prompt, &a.prompt_file) {
        (Some(p), _) => p.clone(),
        (None, Some(f)) => std::fs::read_to_string(f)
            .with_context(|| format!("cannot read the prompt file {}", f.display()))?,
        (None, None) => bail!("give the task with --prompt TEXT or --prompt-file FILE"),
    };
    let mut model = model_for(&a.agent)?;
    eprintln!("model: {}", model.describe());
    let app = a.agent.app()?;
    let mut req = RunRequest::new(a.inputs.clone(), prompt);
    req.out = a.out.clone();
    req.config = a.agent.config().await?;

    let cancel = CancellationToken::new();
    on_ctrl_c(Arc::new(Mutex::new(Some(cancel.clone()))));
    let printer = Printer::new(a.agent.verbose);
    // The ask's id, answer and typed error, which the run's outcome does not carry.
    let finished: Arc<Mutex<Finished>> = Arc::default();
    let seen = finished.clone();
    let emit = move |ev: Event| {
        seen.lock().unwrap().see(&ev);
        printer.print(&ev);
    };
    let outcome = app.run(req, model.as_mut(), &emit, &cancel).await?;
    if let Some(line) = usage_line(&outcome.usage, outcome.cost_usd) {
        eprintln!("{line}");
    }
    if a.output.json {
        let f = std::mem::take(&mut *finished.lock().unwrap());
        json::print(&json::AskResult {
            session_id: outcome.run_id.clone(),
            ask_id: f.ask_id,
            status: json::Status::of(&outcome.status),
            turns: outcome.turns,
            usage: outcome.usage,
            cost_usd: outcome.cost_usd,
            answer: f.answer,
            outputs_dir: outcome.outputs_dir.clone(),
            outputs: outcome.outputs.clone(),
            error: f.error,
        });
    } else {
        println!("{}", outcome.outputs_dir.display());
    }
    Ok(exit::of_status(&outcome.status))
}

/// What a run's events say that its outcome does not: the ask's id, its answer and
/// the typed error behind a failure.
#[derive(Default)]
struct Finished {
    ask_id: Option<String>,
    answer: Option<String>,
    error: Option<sandalyst::protocol::ErrorInfo>,
}

impl Finished {
    fn see(&mut self, ev: &Event) {
        match &ev.kind {
            EventKind::AskFinished { answer, .. } => {
                self.ask_id = ev.ask_id.clone().map(String::from);
                self.answer = answer.clone();
            }
            EventKind::Error { error } if ev.ask_id.is_some() => self.error = Some(error.clone()),
            _ => {}
        }
    }
}

async fn cmd_image(cmd: ImageCommand) -> anyhow::Result<u8> {
    let factory = api::default_factory();
    match cmd {
        ImageCommand::Status { out: o } => {
            let st = api::engine::image_report(factory.as_ref()).await?;
            if o.json {
                json::print(&json::ImageStatus::of(st));
                return Ok(exit::DONE);
            }
            let build_hint = "no (`sandalyst image build` builds it; a run builds it too)";
            println!("image:   {}", st.tag);
            if st.present {
                println!(
                    "present: yes ({} MB, created {})",
                    st.size_bytes.unwrap_or(0) >> 20,
                    st.created.unwrap_or_default()
                );
            } else {
                println!("present: {build_hint}");
            }
            for t in &st.stale_tags {
                println!("older:   {t} (no longer used)");
            }
            if let Some(c) = &st.custom {
                println!("custom:  {} ({})", c.tag, c.packages);
                println!("present: {}", if c.present { "yes" } else { build_hint });
            }
            match st.python.map(|p| (p.tag, p.env)) {
                Some((tag, Ok(env))) => {
                    let mut text = format!(
                        "python:  {} ({tag})\npackages ({}):\n",
                        env.python,
                        env.packages.len()
                    );
                    for p in &env.packages {
                        text.push_str(&format!("  {:<28} {}\n", p.name, p.version));
                    }
                    out(&text);
                }
                Some((_, Err(e))) => println!("packages: unknown ({e})"),
                None => {}
            }
        }
        ImageCommand::Build {
            offline,
            dockerfile,
            pip,
            apt,
            ca_file,
            build_network,
            force,
            out: o,
        } => {
            let build = BuildRequest {
                offline,
                dockerfile,
                pip,
                apt,
                ca_file,
                build_network,
                force,
            };
            let tag = api::engine::build_images(factory.as_ref(), build, &print_build).await?;
            if o.json {
                json::print(&json::Built { tag });
            } else {
                println!("{tag}");
            }
        }
    }
    Ok(exit::DONE)
}

/// A build's progress as lines on stderr: steps flush left, output indented.
fn print_build(line: BuildLine) {
    match line {
        BuildLine::UpToDate { tag } => eprintln!("image {tag} is up to date"),
        BuildLine::Base(line) => eprintln!("  {}", escape(&line)),
        BuildLine::Derived(p) => match &p {
            api::engine::BuildProgress::Line { text } => eprintln!("    {}", escape(text)),
            _ => eprintln!("  {}", escape(&p.to_string())),
        },
        BuildLine::Ready { tag, packages } => eprintln!("image {tag} ({packages}) is ready"),
    }
}

/// Print to stdout, control characters escaped; a reader that went away (`| head`)
/// ends the command quietly.
fn out(text: &str) {
    write_stdout_raw(escape_lines(text).as_bytes());
}

/// Text already safe for a terminal (JSON, whose strings are escaped) on stdout.
pub(crate) fn write_stdout(text: &str) {
    write_stdout_raw(text.as_bytes());
}

fn write_stdout_raw(bytes: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

async fn cmd_runs(cmd: RunsCommand) -> anyhow::Result<u8> {
    match cmd {
        RunsCommand::List { data_dir, out: o } if o.json => {
            let sessions = open_app(data_dir)?.list_sessions().await?;
            json::print(&json::RunsList::of(sessions));
        }
        RunsCommand::List { data_dir, .. } => {
            let list = open_app(data_dir)?.list_runs().await?;
            for r in list.runs {
                out(&format!(
                    "{}  {:<28}  {} ask(s)  {} output(s)  {}\n",
                    r.id,
                    r.status,
                    r.asks,
                    r.outputs,
                    escape(&r.title)
                ));
            }
            // Named, not hidden: a folder whose run.json is gone, torn or hostile.
            for u in list.unreadable {
                out(&format!(
                    "{}  unreadable: {}\n",
                    escape(&u.folder),
                    escape(&u.reason)
                ));
            }
        }
        RunsCommand::Show {
            id,
            data_dir,
            out: o,
        } if o.json => {
            json::print(&open_app(data_dir)?.run_record(&id).await?);
        }
        RunsCommand::Show { id, data_dir, .. } => {
            out(&open_app(data_dir)?.show_run(&id).await?);
        }
        RunsCommand::Export {
            id,
            dir,
            notebook,
            script,
            report,
            data_dir,
            out: o,
        } => {
            let app = open_app(data_dir)?;
            let mut paths = Vec::new();
            let mut notes = Vec::new();
            if let Some(file) = report {
                let done = app.export_report(&id, file, false).await?;
                paths.push(done.path);
                notes = done.notes;
            }
            if let Some(dir) = dir {
                if notebook || script {
                    let formats = api::exports::Formats { notebook, script };
                    paths.extend(app.export_analysis(&id, dir, formats).await?);
                } else {
                    paths.push(app.copy_session(&id, dir).await?);
                }
            }
            if o.json {
                json::print(&json::Exported { paths, notes });
            } else {
                for note in notes {
                    eprintln!("note: {}", escape(&note));
                }
                for path in paths {
                    println!("{}", escape(&path.display().to_string()));
                }
            }
        }
    }
    Ok(exit::DONE)
}

async fn cmd_models(a: ModelsArgs) -> anyhow::Result<u8> {
    let listed = api::settings::list_models(a.model.as_deref(), a.base_url.as_deref()).await?;
    if a.out.json {
        json::print(&json::Models { models: listed });
        return Ok(exit::DONE);
    }
    for m in listed {
        match &m.detail {
            Some(d) => println!("{}  {}", escape(&m.spec), escape(d)),
            None => println!("{}", escape(&m.spec)),
        }
    }
    Ok(exit::DONE)
}

async fn cmd_rerun(a: RerunArgs) -> anyhow::Result<u8> {
    let app = open_app(a.data_dir)?;
    if let Some(out) = &a.out {
        app.check_out_dir(out).await?;
    }
    let cancel = CancellationToken::new();
    on_ctrl_c(Arc::new(Mutex::new(Some(cancel.clone()))));
    let printer = Printer::new(a.verbose);
    let emit = move |ev: Event| printer.print(&ev);
    let rerun = app.rerun(&a.session, a.inputs).await?;
    let outcome = app.replay(rerun, &emit, Some(cancel)).await?;
    eprintln!(
        "session {} re-ran session {}: {} of {} call(s) ran{}",
        outcome.session_id,
        outcome.source,
        outcome.ran,
        outcome.cells,
        if outcome.skipped > 0 {
            format!(
                " ({} that failed in the original left out)",
                outcome.skipped
            )
        } else {
            String::new()
        }
    );
    if let Some(f) = &outcome.failed {
        eprintln!(
            "call {} of {} ({}, from {} of session {}) failed on the new data:\n{}",
            f.index,
            outcome.cells,
            escape(&f.call_id),
            escape(&f.ask),
            outcome.source,
            escape_lines(f.output.trim_end())
        );
        eprintln!("{}", outcome.continue_hint());
    }
    // A call that failed makes the status `failed` (exit 3); its outputs stay in the
    // new session and are not copied to --out.
    let outputs_dir = match (&a.out, &outcome.failed) {
        (Some(out), None) => {
            app.copy_outputs(&outcome.outputs_dir, out).await?;
            out.clone()
        }
        _ => outcome.outputs_dir.clone(),
    };
    if a.output.json {
        json::print(&json::Rerun {
            session_id: outcome.session_id.clone(),
            source: outcome.source.clone(),
            status: json::Status::of(&outcome.status),
            cells: outcome.cells,
            ran: outcome.ran,
            skipped: outcome.skipped,
            failed: outcome.failed.clone(),
            outputs_dir,
            outputs: outcome.outputs.clone(),
        });
    } else {
        println!("{}", outputs_dir.display());
    }
    Ok(exit::of_status(&outcome.status))
}
