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
    /// A conversation with your files: one ask per line (from a terminal or a pipe);
    /// Ctrl-C stops the current ask, Ctrl-D leaves.
    Chat(ChatArgs),
    /// Ask once more in an earlier session (its files, outputs and conversation).
    Ask(AskArgs),
    /// Build or inspect the sandbox image.
    #[command(subcommand)]
    Image(ImageCommand),
    /// List, show and export earlier runs and sessions.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Replay a session's recorded python and shell calls on new input files, without
    /// a model, into a new session (exit code 2 when a call fails on the new data).
    Rerun(RerunArgs),
    /// List the models a provider's server offers (Ollama's own list, `/v1/models`),
    /// the offline analyst first; each line starts with what `--model` takes.
    Models(ModelsArgs),
}

#[derive(Args)]
struct ModelsArgs {
    /// The provider: ollama, openai-compatible (with --base-url or the config file's
    /// base_url), openai, anthropic; default: the configured model's.
    #[arg(long, value_name = "PROVIDER")]
    model: Option<String>,
    /// The server's base URL, as for `run`.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
}

#[derive(Args)]
struct RerunArgs {
    /// The session to re-run (see `sandalyst runs list`).
    session: String,
    /// A new input file (repeatable): it replaces the input of the same name, or the
    /// session's only input.
    #[arg(long = "input", short = 'i', value_name = "FILE", required = true)]
    inputs: Vec<PathBuf>,
    #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Also copy the new session's output/ folder into DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print each call's full code and output.
    #[arg(long, short = 'v')]
    verbose: bool,
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
    #[command(flatten)]
    agent: AgentArgs,
}

#[derive(Args)]
struct ChatArgs {
    /// A file or folder to stage as input/ (repeatable).
    #[arg(long = "input", short = 'i', value_name = "PATH")]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    agent: AgentArgs,
}

#[derive(Args)]
struct AskArgs {
    /// The session's id (see `sandalyst runs list`).
    session: String,
    /// What you want done next.
    #[arg(long, short = 'p', value_name = "TEXT")]
    prompt: String,
    /// More files to stage before asking (repeatable).
    #[arg(long = "input", short = 'i', value_name = "PATH")]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    agent: AgentArgs,
}

/// The model, the agent's limits and the sandbox, shared by run, chat and ask.
#[derive(Args)]
struct AgentArgs {
    /// The model (the help text lists the providers of the core's table).
    #[arg(long, short = 'm', value_name = "PROVIDER:MODEL", help = api::settings::model_help())]
    model: Option<String>,
    /// The provider's base URL, e.g. http://localhost:11434/v1 for Ollama.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Stop after this many model turns (per ask).
    #[arg(long, value_name = "N", default_value_t = defaults().limits.max_turns)]
    max_turns: u32,
    /// Wall-time limit of one ask, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = defaults().limits.wall_time.as_secs())]
    timeout: u64,
    /// Time limit for one python or shell call, in seconds; the code is interrupted.
    #[arg(long, value_name = "SECONDS", default_value_t = defaults().limits.call_timeout.as_secs())]
    call_timeout: u64,
    /// Stop an ask (after a last summary) once its estimated cost reaches USD.
    #[arg(long, value_name = "USD")]
    max_cost: Option<f64>,
    /// Your own instructions for the agent, added to the built-in ones.
    #[arg(long, value_name = "TEXT")]
    instructions: Option<String>,
    /// Do not send charts and figures back to the model.
    #[arg(long)]
    no_images: bool,
    /// The sandbox's network: off (the default: no network at all), allow:HOST,...
    /// (only those hosts, through Sandalyst's proxy, which checks and records every
    /// connection and never lets one reach a private or link-local address; a preset
    /// names several: allow:@python-packages is pypi.org and files.pythonhosted.org;
    /// a host may carry a port, a leading *. matches its subdomains), or full
    /// (unchecked and unrecorded: everything this machine reaches, the local network
    /// and cloud metadata included). `--network` alone is full. Default: `network` in
    /// the config file, else off.
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "full")]
    network: Option<api::NetworkMode>,
    /// Send a host name of the allowlist to an address of your choosing, private ones
    /// included (a package mirror on the LAN): NAME=IP or NAME=IP:PORT. Repeatable.
    #[arg(long, value_name = "NAME=ADDR")]
    resolve: Vec<api::Pin>,
    /// Which calls wait for your approval before they run: auto (none), shell (shell
    /// calls) or all (every python and shell call). `chat` and `ask` ask y/e/n; `run`
    /// refuses to start unless auto. Default: `approve` in the config file, else auto.
    #[arg(long, value_name = "MODE")]
    approve: Option<api::ApprovalMode>,
    /// What isolates the sandbox: runc (the container, sharing the host's kernel),
    /// gvisor (runsc, where the engine has it registered: `scripts/setup.sh --gvisor`;
    /// offline sandboxes only), or auto (gVisor where runsc is registered and the sandbox
    /// is offline, else runc).
    #[arg(long, value_name = "RUNTIME", default_value = "auto")]
    isolation: api::Isolation,
    /// Do not offer the shell tool to the model (python only).
    #[arg(long)]
    no_shell: bool,
    /// Run even where the engine cannot enforce memory, CPU and process limits
    /// (rootless Podman on a cgroup v1 host); otherwise such a start is refused.
    #[arg(long)]
    allow_no_limits: bool,
    /// Memory limit of the sandbox, in MiB (the workspace gets at most half of it).
    #[arg(long, value_name = "MIB", default_value_t = defaults().sandbox.memory_bytes >> 20)]
    memory: i64,
    /// CPUs the sandbox may use (fractions allowed).
    #[arg(long, value_name = "N", default_value_t = defaults().sandbox.nano_cpus as f64 / 1e9)]
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

/// The core's defaults, which the flags' help shows (written once, in the core).
fn defaults() -> SessionConfig {
    SessionConfig::default()
}

impl AgentArgs {
    /// The flags as the core takes them.
    fn flags(&self) -> Flags {
        Flags {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            max_turns: self.max_turns,
            timeout_secs: self.timeout,
            call_timeout_secs: self.call_timeout,
            max_cost_usd: self.max_cost,
            instructions: self.instructions.clone(),
            no_images: self.no_images,
            network: self.network.clone(),
            resolve: self.resolve.clone(),
            no_shell: self.no_shell,
            allow_no_limits: self.allow_no_limits,
            memory_mib: self.memory,
            cpus: self.cpus,
            image: self.image.clone(),
            approve: self.approve,
            isolation: self.isolation,
        }
    }

    /// The session settings of the flags and the config file; its notes printed.
    async fn config(&self) -> anyhow::Result<SessionConfig> {
        let Configured { config, notes } = self.flags().session_config().await?;
        for n in notes {
            eprintln!("note: {n}");
        }
        Ok(config)
    }

    fn app(&self) -> anyhow::Result<App> {
        App::open(api::data_root(self.data_dir.clone())?)
    }
}

#[derive(Subcommand)]
enum ImageCommand {
    /// Build the sandbox image (skipped when it is already up to date), and the image
    /// with your own packages on it (--pip, --apt, or the config file's [image]).
    Build {
        /// Build from Debian packages with mmdebstrap (no registry needed).
        #[arg(long, conflicts_with = "dockerfile")]
        offline: bool,
        /// Build from docker/Dockerfile (needs a registry for python:3.12-slim).
        #[arg(long)]
        dockerfile: bool,
        /// Python packages from PyPI to add (pip names, versions allowed: `tabulate`,
        /// `pyjanitor==0.27`); instead of the config file's [image] lists.
        #[arg(long, value_name = "PKG", num_args = 1..)]
        pip: Vec<String>,
        /// Debian packages to add (e.g. `fonts-noto-cjk`); instead of the config file's.
        #[arg(long, value_name = "PKG", num_args = 1..)]
        apt: Vec<String>,
        /// A CA file (PEM) the package build trusts, behind a proxy that intercepts TLS.
        #[arg(long, value_name = "FILE", env = "SANDALYST_BUILD_CA_FILE")]
        ca_file: Option<PathBuf>,
        /// The package build's network mode (e.g. `host`); runs never have network.
        #[arg(long, value_name = "MODE")]
        build_network: Option<String>,
        /// Build the package image again even if it is there.
        #[arg(long)]
        force: bool,
    },
    /// Say which image this version uses, whether it is there, and its Python packages.
    Status,
}

#[derive(Subcommand)]
enum RunsCommand {
    /// List earlier runs, newest first (as the desktop lists them).
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
    /// Copy a run (metadata, transcript, outputs, workspace archive) into DIR/<id>; or,
    /// with --notebook and/or --script, write its analysis into DIR (analysis.ipynb,
    /// analysis.py, and the inputs in DIR/input/).
    Export {
        id: String,
        dir: PathBuf,
        /// Write a Jupyter notebook (nbformat 4.5) of the executed code.
        #[arg(long)]
        notebook: bool,
        /// Write a plain Python script, runnable from the folder that holds input/.
        #[arg(long)]
        script: bool,
        #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
}

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

/// Waits for Ctrl-C, or (on Unix) SIGTERM or SIGHUP, which are handled the same way:
/// a `kill` or a closed terminal cancels the run and removes its container.
struct Interrupts {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl Interrupts {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            // SIGINT's handler too, now (tokio::signal::ctrl_c() below shares it).
            let _ = signal(SignalKind::interrupt());
            Interrupts {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Interrupts {}
    }

    /// The next interrupt: `Some(true)` for SIGTERM or SIGHUP (end the process),
    /// `Some(false)` for Ctrl-C; `None` when signals cannot be listened for.
    async fn next(&mut self) -> Option<bool> {
        #[cfg(unix)]
        {
            async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                r = tokio::signal::ctrl_c() => r.is_ok().then_some(false),
                _ = recv(&mut self.term) => Some(true),
                _ = recv(&mut self.hup) => Some(true),
            }
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c().await.is_ok().then_some(false)
    }
}

/// How long the first interrupt's cancel and clean-up may take before the process
/// exits anyway (an engine that stopped answering must not keep it alive).
const GRACE: Duration = Duration::from_secs(10);

/// The first Ctrl-C (or SIGTERM, SIGHUP) cancels whatever token is current; a second
/// one quits at once, and so does the end of [`GRACE`].
fn on_ctrl_c(current: Arc<Mutex<Option<CancellationToken>>>) {
    on_signals(current, None)
}

/// [`on_ctrl_c`], where SIGTERM and SIGHUP also cancel `quit` (the chat ends after
/// the ask, where Ctrl-C stops only the ask).
fn on_signals(current: Arc<Mutex<Option<CancellationToken>>>, quit: Option<CancellationToken>) {
    // Listening from now on, not from whenever the task first runs: a signal that
    // came before would kill the process with nothing cleaned up.
    let mut interrupts = Interrupts::new();
    tokio::spawn(async move {
        while let Some(terminate) = interrupts.next().await {
            if let (true, Some(quit)) = (terminate, &quit) {
                quit.cancel();
            }
            match current.lock().unwrap().take() {
                Some(token) => {
                    eprintln!("\ncancelling (press Ctrl-C again to quit at once)...");
                    token.cancel();
                    // Not when only the ask stops (Ctrl-C in a chat): the chat goes on.
                    let ends_process = terminate || quit.is_none();
                    // A plain thread: it fires even if the async runtime is stuck.
                    ends_process.then(|| {
                        std::thread::spawn(|| {
                            std::thread::sleep(GRACE);
                            eprintln!(
                                "the clean-up did not finish in {} s; quitting",
                                GRACE.as_secs()
                            );
                            std::process::exit(130);
                        })
                    });
                }
                None => {
                    eprintln!();
                    std::process::exit(130);
                }
            }
        }
    });
}

/// `work`, unless `token` is cancelled first (then `None`).
async fn unless_cancelled<T>(
    token: &CancellationToken,
    work: impl std::future::Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        biased;
        _ = token.cancelled() => None,
        r = work => Some(r),
    }
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

async fn cmd_chat(a: ChatArgs) -> anyhow::Result<ExitCode> {
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
        let Some(added) = unless_cancelled(&quit, session.add_files(a.inputs.clone())).await else {
            session.close().await;
            return Ok(ExitCode::from(130));
        };
        for f in added? {
            eprintln!("  input/{} ({} bytes)", escape(&f.name), f.bytes);
        }
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
        let outcome = follow_answering(&app, handle, &printer, &mut lines).await;
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
    Ok(exit_code(&last))
}

async fn cmd_ask(a: AskArgs) -> anyhow::Result<ExitCode> {
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
        let Some(added) = unless_cancelled(&quit, session.add_files(a.inputs.clone())).await else {
            session.close().await;
            return Ok(ExitCode::from(130));
        };
        added?;
    }
    let model = model_for(&a.agent)?;
    let handle = app.ask(&session, a.prompt.clone(), model)?;
    *current.lock().unwrap() = Some(handle.canceller());
    if quit.is_cancelled() {
        handle.cancel();
        *current.lock().unwrap() = None;
    }
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let outcome = follow_answering(&app, handle, &printer, &mut lines).await;
    session.close().await;
    Ok(exit_code(&outcome.status))
}

type Stdin = tokio::io::Lines<tokio::io::BufReader<tokio::io::Stdin>>;

/// Print an ask's events as they come, answering each call that waits for approval
/// from `lines` (y/e/n/a); then its answer on stdout. Input that ends while a call
/// waits stops the ask: nobody is left to answer.
async fn follow_answering(app: &App, ask: Ask, printer: &Printer, lines: &mut Stdin) -> AskOutcome {
    let (tx, mut waiting) = tokio::sync::mpsc::unbounded_channel();
    let p = printer.clone();
    let emit = move |ev: Event| {
        p.print(&ev);
        if let EventKind::ApprovalRequested { call_id, tool, .. } = &ev.kind {
            let _ = tx.send((call_id.clone(), tool.clone()));
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
    print_end(&outcome);
    outcome
}

/// One y/e/n/a answer from the person; `None` when the input ends.
async fn read_answer(tool: &str, lines: &mut Stdin) -> Option<api::Answer> {
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

/// The ask's usage line, then its answer on stdout.
fn print_end(outcome: &AskOutcome) {
    if let Some(line) = usage_line(&outcome.usage, outcome.cost_usd) {
        eprintln!("{line}");
    }
    if let Some(answer) = &outcome.answer {
        println!("{}", escape_lines(answer));
    }
}

/// Set-up progress of the session (engine, image, staging) as it happens.
async fn watch(app: &App, id: &str, printer: &Printer) -> anyhow::Result<()> {
    let p = printer.clone();
    app.watch(id, move |ev| p.print(&ev)).await?;
    Ok(())
}

/// Events as progress lines on stderr. Deltas are not printed: the complete text
/// and code follow them.
#[derive(Clone)]
struct Printer {
    verbose: bool,
}

impl Printer {
    fn new(verbose: bool) -> Printer {
        Printer { verbose }
    }

    /// Everything printed passes [`escape_lines`] (names, model text and outputs come
    /// from the model and its code); single-line names are escaped whole.
    fn print(&self, ev: &Event) {
        let mut buf = Vec::new();
        self.write(ev, &mut buf);
        let text = String::from_utf8_lossy(&buf);
        let _ = std::io::stderr()
            .lock()
            .write_all(escape_lines(&text).as_bytes());
    }

    fn write(&self, ev: &Event, err: &mut Vec<u8>) {
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
                SetupStage::SandboxReady { millis } => {
                    writeln!(err, "  sandbox ready in {millis} ms")
                }
                SetupStage::WorkspaceRestored => writeln!(err, "  earlier workspace restored"),
                SetupStage::SandboxReleased => writeln!(err, "  sandbox released (idle)"),
            },
            EventKind::Status { message } => writeln!(err, "  {message}"),
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
                call_id,
                name,
                code,
            } => {
                // With -v: which calls the model wrote as text and the app read.
                let how = if v && api::is_text_call(call_id) {
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

/// One connection through the allowlist proxy: refusals always, the rest with -v.
fn network_line(c: &api::EgressEvent, verbose: bool, err: &mut Vec<u8>) -> std::io::Result<()> {
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
