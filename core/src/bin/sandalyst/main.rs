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
use sandalyst::api::settings::{Configured, Flags};
use sandalyst::api::{
    self, usage_line, App, Ask, AskOutcome, Event, EventKind, RunRequest, RunStatus, SessionConfig,
    SetupStage,
};
use sandalyst::terminal::{escape, escape_lines};
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

mod args;
mod chat;
mod printer;
mod signals;

use args::*;
use chat::*;
use printer::*;
use signals::*;

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    };
    match result {
        Ok(code) => code,
        Err(e) if e.downcast_ref::<api::Cancelled>().is_some() => {
            eprintln!("cancelled");
            ExitCode::from(130)
        }
        Err(e) => {
            eprintln!("error: {}", escape_lines(&format!("{e:#}")));
            ExitCode::from(1)
        }
    }
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

fn exit_code(status: &RunStatus) -> ExitCode {
    match status {
        RunStatus::Finished => ExitCode::SUCCESS,
        RunStatus::Cancelled => ExitCode::from(130),
        _ => ExitCode::from(2),
    }
}

async fn cmd_run(a: RunArgs) -> anyhow::Result<ExitCode> {
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
    let emit = move |ev: Event| printer.print(&ev);
    let outcome = app.run(req, model.as_mut(), &emit, &cancel).await?;
    if let Some(line) = usage_line(&outcome.usage, outcome.cost_usd) {
        eprintln!("{line}");
    }
    println!("{}", outcome.outputs_dir.display());
    Ok(exit_code(&outcome.status))
}

async fn cmd_image(cmd: ImageCommand) -> anyhow::Result<ExitCode> {
    let factory = api::default_factory();
    match cmd {
        ImageCommand::Status => {
            let st = api::engine::image_report(factory.as_ref()).await?;
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
            println!("{tag}");
        }
    }
    Ok(ExitCode::SUCCESS)
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
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(escape_lines(text).as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

async fn cmd_runs(cmd: RunsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        RunsCommand::List { data_dir } => {
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
        RunsCommand::Show { id, data_dir } => {
            out(&open_app(data_dir)?.show_run(&id).await?);
        }
        RunsCommand::Export {
            id,
            dir,
            notebook,
            script,
            data_dir,
        } => {
            let app = open_app(data_dir)?;
            if notebook || script {
                let formats = api::exports::Formats { notebook, script };
                for path in app.export_analysis(&id, dir, formats).await? {
                    println!("{}", escape(&path.display().to_string()));
                }
            } else {
                let copied = app.copy_session(&id, dir).await?;
                println!("{}", escape(&copied.display().to_string()));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn cmd_models(a: ModelsArgs) -> anyhow::Result<ExitCode> {
    let listed = api::settings::list_models(a.model.as_deref(), a.base_url.as_deref()).await?;
    for m in listed {
        match &m.detail {
            Some(d) => println!("{}  {}", escape(&m.spec), escape(d)),
            None => println!("{}", escape(&m.spec)),
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn cmd_rerun(a: RerunArgs) -> anyhow::Result<ExitCode> {
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
        println!("{}", outcome.outputs_dir.display());
        return Ok(ExitCode::from(2));
    }
    match &a.out {
        Some(out) => {
            app.copy_outputs(&outcome.outputs_dir, out).await?;
            println!("{}", out.display());
        }
        None => println!("{}", outcome.outputs_dir.display()),
    }
    Ok(exit_code(&outcome.status))
}
