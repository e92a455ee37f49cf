//! The `sandalyst` command line: a thin shell over the core. Progress goes to
//! stderr, results (the outputs' location, listings) to stdout.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use sandalyst::agent::{RunEvent, RunStatus};
use sandalyst::model::config;
use sandalyst::model::pricing::usage_line;
use sandalyst::model::Model;
use sandalyst::run::{self, RunRequest};
use sandalyst::sandbox::{docker, image};
use sandalyst::store::{self, Store};
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
#[command(
    name = "sandalyst",
    version,
    about = "Ask questions of your data files; an agent answers by writing and running Python in a locked-down Docker sandbox."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a task on some files and bring back charts, tables and a report.
    Run(RunArgs),
    /// Build or inspect the sandbox image.
    #[command(subcommand)]
    Image(ImageCommand),
    /// List, show and export earlier runs.
    #[command(subcommand)]
    Runs(RunsCommand),
}

#[derive(Args)]
struct RunArgs {
    /// A file or folder to stage as input/ (repeatable; a folder stages all its files).
    #[arg(long = "input", short = 'i', value_name = "PATH", required = true)]
    inputs: Vec<PathBuf>,
    /// What you want done, in plain words.
    #[arg(
        long,
        short = 'p',
        value_name = "TEXT",
        conflicts_with = "prompt_file",
        required_unless_present = "prompt_file"
    )]
    prompt: Option<String>,
    /// Read the prompt from a file.
    #[arg(long, value_name = "FILE")]
    prompt_file: Option<PathBuf>,
    /// Also copy the outputs (the sandbox's output/ folder) into DIR.
    #[arg(long, short = 'o', value_name = "DIR")]
    out: Option<PathBuf>,
    /// The model: openai:MODEL, anthropic:MODEL, openai-compatible:MODEL (with
    /// --base-url), ollama:MODEL, replay:FILE (a JSON list of python/shell/say steps), or
    /// offline (the built-in rule-based analyst, not an LLM). Default: `model` in the
    /// config file, else offline.
    #[arg(long, short = 'm', value_name = "PROVIDER:MODEL")]
    model: Option<String>,
    /// The provider's base URL, e.g. http://localhost:11434/v1 for Ollama.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Stop after this many model turns.
    #[arg(long, value_name = "N", default_value_t = 25)]
    max_turns: u32,
    /// Wall-time limit for the whole run, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800)]
    timeout: u64,
    /// Time limit for one python or shell call, in seconds; the code is interrupted.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    call_timeout: u64,
    /// Give the sandbox network access (off by default).
    #[arg(long)]
    network: bool,
    /// Do not offer the shell tool to the model (python only).
    #[arg(long)]
    no_shell: bool,
    /// Memory limit of the sandbox, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 2048)]
    memory: i64,
    /// CPUs the sandbox may use (fractions allowed).
    #[arg(long, value_name = "N", default_value_t = 1.0)]
    cpus: f64,
    /// Use this image instead of the built-in sandbox image.
    #[arg(long, value_name = "TAG", env = "SANDALYST_IMAGE")]
    image: Option<String>,
    /// Where run history is kept (default: the user's data directory).
    #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Print each call's full code and output.
    #[arg(long, short = 'v')]
    verbose: bool,
}

#[derive(Subcommand)]
enum ImageCommand {
    /// Build the sandbox image (skipped when it is already up to date).
    Build {
        /// Build from Debian packages with mmdebstrap (no registry needed).
        #[arg(long, conflicts_with = "dockerfile")]
        offline: bool,
        /// Build from docker/Dockerfile (needs a registry for python:3.12-slim).
        #[arg(long)]
        dockerfile: bool,
    },
    /// Say which image this version uses and whether it is there.
    Status,
}

#[derive(Subcommand)]
enum RunsCommand {
    /// List earlier runs, oldest first.
    List {
        #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Show a run's transcript.
    Show {
        id: String,
        #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Copy a run (metadata, transcript, outputs, workspace archive) into DIR/<id>.
    Export {
        id: String,
        dir: PathBuf,
        #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => cmd_run(args).await,
        Command::Image(cmd) => cmd_image(cmd).await,
        Command::Runs(cmd) => cmd_runs(cmd),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn open_store(dir: Option<PathBuf>) -> anyhow::Result<Store> {
    Store::open(match dir {
        Some(d) => d,
        None => store::default_root()?,
    })
}

/// The model from --model/--base-url, the environment, the config file and the keychain.
fn model_for(a: &RunArgs) -> anyhow::Result<Box<dyn Model>> {
    let selection = config::from_environment(a.model.as_deref(), a.base_url.as_deref())?;
    if let config::Selection::Offline { why } = &selection {
        eprintln!("note: {why}");
    }
    selection.open()
}

async fn cmd_run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let prompt = match (&a.prompt, &a.prompt_file) {
        (Some(p), _) => p.clone(),
        (None, Some(f)) => std::fs::read_to_string(f)
            .with_context(|| format!("cannot read the prompt file {}", f.display()))?,
        (None, None) => bail!("give the task with --prompt TEXT or --prompt-file FILE"),
    };
    let mut model = model_for(&a)?;
    eprintln!("model: {}", model.describe());
    let store = open_store(a.data_dir.clone())?;
    let mut req = RunRequest::new(a.inputs.clone(), prompt);
    req.out = a.out.clone();
    req.limits.max_turns = a.max_turns;
    req.limits.wall_time = Duration::from_secs(a.timeout);
    req.limits.call_timeout = Duration::from_secs(a.call_timeout);
    req.tools.shell = !a.no_shell;
    req.sandbox.network = a.network;
    req.sandbox.memory_bytes = a.memory << 20;
    req.sandbox.nano_cpus = (a.cpus * 1e9) as i64;
    req.sandbox.image = a.image.clone().unwrap_or_default();

    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ncancelling (press Ctrl-C again to quit at once)...");
            on_signal.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
    let verbose = a.verbose;
    let emit = move |ev: RunEvent| print_event(&ev, verbose);
    let outcome = run::execute(&store, req, model.as_mut(), &emit, &cancel).await?;
    if let Some(line) = usage_line(&outcome.usage, outcome.cost_usd) {
        eprintln!("{line}");
    }
    println!("{}", outcome.outputs_dir.display());
    Ok(match outcome.status {
        RunStatus::Finished => ExitCode::SUCCESS,
        RunStatus::Cancelled => ExitCode::from(130),
        _ => ExitCode::from(2),
    })
}

/// One event as progress lines on stderr.
fn print_event(ev: &RunEvent, verbose: bool) {
    let mut err = std::io::stderr().lock();
    let _ = match ev {
        RunEvent::Status { message } => writeln!(err, "  {message}"),
        RunEvent::RunStarted {
            run_id, run_dir, ..
        } => writeln!(err, "run {run_id} started ({run_dir})"),
        RunEvent::TurnStarted { turn, max_turns } => writeln!(err, "turn {turn}/{max_turns}"),
        RunEvent::AssistantText { text } => {
            writeln!(err, "  assistant: {}", indent(text, verbose, 12))
        }
        RunEvent::ToolCall { name, code, .. } => {
            writeln!(err, "  {name}: {}", indent(code, verbose, 3))
        }
        RunEvent::ToolOutput { output, .. } => writeln!(err, "  -> {}", indent(output, verbose, 4)),
        RunEvent::ArtifactWritten { path, bytes } => {
            writeln!(err, "  wrote output/{path} ({bytes} bytes)")
        }
        RunEvent::RunFinished { status, .. } => writeln!(err, "run {status}"),
    };
}

/// The first `lines` lines (all when verbose), indented under the label.
fn indent(text: &str, verbose: bool, lines: usize) -> String {
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

async fn cmd_image(cmd: ImageCommand) -> anyhow::Result<ExitCode> {
    let engine = docker::connect().await?;
    match cmd {
        ImageCommand::Status => {
            let st = image::status(&engine).await?;
            println!("image:   {}", st.tag);
            if st.present {
                println!(
                    "present: yes ({} MB, created {})",
                    st.size_bytes.unwrap_or(0) >> 20,
                    st.created.unwrap_or_default()
                );
            } else {
                println!("present: no (`sandalyst image build` builds it; a run builds it too)");
            }
            for t in st.stale_tags {
                println!("older:   {t} (no longer used)");
            }
        }
        ImageCommand::Build {
            offline,
            dockerfile,
        } => {
            let method = match (offline, dockerfile) {
                (true, _) => image::BuildMethod::Offline,
                (_, true) => image::BuildMethod::Dockerfile,
                _ => image::BuildMethod::Auto,
            };
            let st = image::status(&engine).await?;
            if st.present {
                eprintln!("image {} is up to date", st.tag);
                println!("{}", st.tag);
            } else {
                let tag = image::build(&engine, method, &|line| eprintln!("  {line}")).await?;
                println!("{tag}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_runs(cmd: RunsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        RunsCommand::List { data_dir } => {
            let store = open_store(data_dir)?;
            let _ = store.mark_interrupted();
            for m in store.list()? {
                let status = m
                    .status
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "in progress".into());
                let prompt: String = m
                    .prompt
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(60)
                    .collect();
                println!(
                    "{}  {:<28}  {} output(s)  {}",
                    m.id,
                    status,
                    m.outputs.len(),
                    prompt
                );
            }
        }
        RunsCommand::Show { id, data_dir } => {
            let store = open_store(data_dir)?;
            let run = store.open_run(&id)?;
            print!(
                "{}",
                store::render_transcript(&run.meta, &run.transcript()?)
            );
            println!("folder: {}", run.path.display());
        }
        RunsCommand::Export { id, dir, data_dir } => {
            let store = open_store(data_dir)?;
            let run = store.open_run(&id)?;
            println!("{}", run.export(&dir)?.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
