//! The command line's arguments (clap), and the flags as the core takes them; every
//! default is the core's own (`SessionConfig::default`).

use super::*;

#[derive(Parser)]
#[command(
    name = "sandalyst",
    version,
    about = "Ask questions of your data files; an agent answers by writing and running Python in a locked-down Docker sandbox.",
    after_help = exit::codes_help(),
    after_long_help = exit::long_help()
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// a model, into a new session (exit code 3 when a call fails on the new data).
    Rerun(RerunArgs),
    /// List the models a provider's server offers (Ollama's own list, `/v1/models`),
    /// the offline analyst first; each line starts with what `--model` takes.
    Models(ModelsArgs),
    /// Print a completion script for SHELL on stdout, e.g.
    /// `sandalyst completions bash > ~/.local/share/bash-completion/completions/sandalyst`.
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout, or write one page per command into DIR.
    #[command(hide = true)]
    Man {
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

impl Command {
    /// The subcommand's name, for the log.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Command::Run(_) => "run",
            Command::Chat(_) => "chat",
            Command::Ask(_) => "ask",
            Command::Image(ImageCommand::Build { .. }) => "image build",
            Command::Image(ImageCommand::Status { .. }) => "image status",
            Command::Runs(RunsCommand::List { .. }) => "runs list",
            Command::Runs(RunsCommand::Show { .. }) => "runs show",
            Command::Runs(RunsCommand::Export { .. }) => "runs export",
            Command::Rerun(_) => "rerun",
            Command::Models(_) => "models",
            Command::Completions { .. } => "completions",
            Command::Man { .. } => "man",
        }
    }

    /// `-v` was given: the log goes to stderr too.
    pub(crate) fn verbose(&self) -> bool {
        match self {
            Command::Run(a) => a.agent.verbose,
            Command::Chat(a) => a.agent.verbose,
            Command::Ask(a) => a.agent.verbose,
            Command::Rerun(a) => a.verbose,
            _ => false,
        }
    }
}

/// `--json`: the result as one JSON document on stdout instead of text (`chat`: one
/// line per ask); progress stays on stderr.
#[derive(Args, Clone, Copy)]
pub(crate) struct JsonFlag {
    /// Print the result as JSON on stdout (one document; `chat`: one line per ask).
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct ModelsArgs {
    /// The provider: ollama, openai-compatible (with --base-url or the config file's
    /// base_url), openai, anthropic; default: the configured model's.
    #[arg(long, value_name = "PROVIDER")]
    pub(crate) model: Option<String>,
    /// The server's base URL, as for `run`.
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    #[command(flatten)]
    pub(crate) out: JsonFlag,
}

#[derive(Args)]
pub(crate) struct RerunArgs {
    /// The session to re-run (see `sandalyst runs list`).
    pub(crate) session: SessionId,
    /// A new input file (repeatable): it replaces the input of the same name, or the
    /// session's only input.
    #[arg(long = "input", short = 'i', value_name = "FILE", required = true)]
    pub(crate) inputs: Vec<PathBuf>,
    #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    /// Also copy the new session's output/ folder into DIR.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Print each call's full code and output.
    #[arg(long, short = 'v')]
    pub(crate) verbose: bool,
    #[command(flatten)]
    pub(crate) output: JsonFlag,
}

#[derive(Args)]
pub(crate) struct RunArgs {
    /// A file or folder to stage as input/ (repeatable; a folder stages all its files).
    #[arg(long = "input", short = 'i', value_name = "PATH", required = true)]
    pub(crate) inputs: Vec<PathBuf>,
    /// What you want done, in plain words.
    #[arg(
        long,
        short = 'p',
        value_name = "TEXT",
        conflicts_with = "prompt_file",
        required_unless_present = "prompt_file"
    )]
    pub(crate) prompt: Option<String>,
    /// Read the prompt from a file.
    #[arg(long, value_name = "FILE")]
    pub(crate) prompt_file: Option<PathBuf>,
    /// Also copy the outputs (the sandbox's output/ folder) into DIR.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) output: JsonFlag,
    #[command(flatten)]
    pub(crate) agent: AgentArgs,
}

#[derive(Args)]
pub(crate) struct ChatArgs {
    /// A file or folder to stage as input/ (repeatable).
    #[arg(long = "input", short = 'i', value_name = "PATH")]
    pub(crate) inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) output: JsonFlag,
    #[command(flatten)]
    pub(crate) agent: AgentArgs,
}

#[derive(Args)]
pub(crate) struct AskArgs {
    /// The session's id (see `sandalyst runs list`).
    pub(crate) session: SessionId,
    /// What you want done next.
    #[arg(long, short = 'p', value_name = "TEXT")]
    pub(crate) prompt: String,
    /// More files to stage before asking (repeatable).
    #[arg(long = "input", short = 'i', value_name = "PATH")]
    pub(crate) inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) output: JsonFlag,
    #[command(flatten)]
    pub(crate) agent: AgentArgs,
}

/// The model, the agent's limits and the sandbox, shared by run, chat and ask.
#[derive(Args)]
pub(crate) struct AgentArgs {
    /// The model (the help text lists the providers of the core's table).
    #[arg(long, short = 'm', value_name = "PROVIDER:MODEL", help = api::settings::model_help())]
    pub(crate) model: Option<String>,
    /// The provider's base URL, e.g. http://localhost:11434/v1 for Ollama.
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Stop after this many model turns (per ask).
    #[arg(long, value_name = "N", default_value_t = defaults().limits.max_turns)]
    pub(crate) max_turns: u32,
    /// Wall-time limit of one ask, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = defaults().limits.wall_time.as_secs())]
    pub(crate) timeout: u64,
    /// Time limit for one python or shell call, in seconds; the code is interrupted.
    #[arg(long, value_name = "SECONDS", default_value_t = defaults().limits.call_timeout.as_secs())]
    pub(crate) call_timeout: u64,
    /// Stop an ask (after a last summary) once its estimated cost reaches USD.
    #[arg(long, value_name = "USD")]
    pub(crate) max_cost: Option<f64>,
    /// Your own instructions for the agent, added to the built-in ones.
    #[arg(long, value_name = "TEXT")]
    pub(crate) instructions: Option<String>,
    /// Do not send charts and figures back to the model.
    #[arg(long)]
    pub(crate) no_images: bool,
    /// The sandbox's network: off (the default: no network at all), allow:HOST,...
    /// (only those hosts, through Sandalyst's proxy, which checks and records every
    /// connection and never lets one reach a private or link-local address; a preset
    /// names several: allow:@python-packages is pypi.org and files.pythonhosted.org;
    /// a host may carry a port, a leading *. matches its subdomains), or full
    /// (unchecked and unrecorded: everything this machine reaches, the local network
    /// and cloud metadata included). `--network` alone is full. Default: `network` in
    /// the config file, else off.
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "full")]
    pub(crate) network: Option<api::NetworkMode>,
    /// Send a host name of the allowlist to an address of your choosing, private ones
    /// included (a package mirror on the LAN): NAME=IP or NAME=IP:PORT. Repeatable.
    #[arg(long, value_name = "NAME=ADDR")]
    pub(crate) resolve: Vec<api::Pin>,
    /// Which calls wait for your approval before they run: auto (none), shell (shell
    /// calls) or all (every python and shell call). `chat` and `ask` ask y/e/n; `run`
    /// refuses to start unless auto. Default: `approve` in the config file, else auto.
    #[arg(long, value_name = "MODE")]
    pub(crate) approve: Option<api::ApprovalMode>,
    /// What isolates the sandbox: runc (the container, sharing the host's kernel),
    /// gvisor (runsc, where the engine has it registered: `scripts/setup.sh --gvisor`;
    /// offline sandboxes only), or auto (gVisor where runsc is registered and the sandbox
    /// is offline, else runc).
    #[arg(long, value_name = "RUNTIME", default_value_t = defaults().sandbox.isolation)]
    pub(crate) isolation: api::Isolation,
    /// Offer the shell tool to the model (false: python only).
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set, default_value_t = defaults().tools.shell)]
    pub(crate) shell: bool,
    /// Do not offer the shell tool to the model (python only): `--shell false`.
    #[arg(long, conflicts_with = "shell")]
    pub(crate) no_shell: bool,
    /// Run even where the engine cannot enforce memory, CPU and process limits
    /// (rootless Podman on a cgroup v1 host); otherwise such a start is refused.
    #[arg(long)]
    pub(crate) allow_no_limits: bool,
    /// Memory limit of the sandbox, in MiB (the workspace gets at most half of it).
    #[arg(long, value_name = "MIB", default_value_t = defaults().sandbox.memory_bytes as u64 >> 20)]
    pub(crate) memory: u64,
    /// CPUs the sandbox may use (fractions allowed).
    #[arg(long, value_name = "N", default_value_t = defaults().sandbox.nano_cpus as f64 / 1e9)]
    pub(crate) cpus: f64,
    /// Use this image instead of the built-in sandbox image.
    #[arg(long, value_name = "TAG", env = "SANDALYST_IMAGE")]
    pub(crate) image: Option<String>,
    /// Where run history is kept (default: the user's data directory).
    #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    /// Print each call's full code and output, and the log (SANDALYST_LOG) on stderr.
    #[arg(long, short = 'v')]
    pub(crate) verbose: bool,
}

/// The core's defaults, which the flags' help shows (written once, in the core).
pub(crate) fn defaults() -> SessionConfig {
    SessionConfig::default()
}

impl AgentArgs {
    /// The flags as the core takes them.
    pub(crate) fn flags(&self) -> Flags {
        Flags {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            choices: Choices {
                instructions: self.instructions.clone(),
                python: None,
                shell: Some(self.shell && !self.no_shell),
                show_images: Some(!self.no_images),
                max_turns: Some(self.max_turns),
                wall_time_secs: Some(self.timeout),
                call_timeout_secs: Some(self.call_timeout),
                max_cost_usd: Some(self.max_cost),
                network: self.network.clone(),
                resolve: self.resolve.clone(),
                approval: self.approve,
                isolation: Some(self.isolation),
                follow_links: None,
                allow_no_limits: self.allow_no_limits,
                memory_mib: Some(self.memory),
                cpus: Some(self.cpus),
                image: self.image.clone(),
                packages: None,
            },
        }
    }

    /// The session settings of the flags and the config file; its notes printed.
    pub(crate) async fn config(&self) -> anyhow::Result<SessionConfig> {
        let Configured { config, notes } = self.flags().session_config().await?;
        for n in notes {
            eprintln!("note: {n}");
        }
        Ok(config)
    }

    pub(crate) fn app(&self) -> anyhow::Result<App> {
        App::open(api::data_root(self.data_dir.clone())?)
    }
}

#[derive(Subcommand)]
pub(crate) enum ImageCommand {
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
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Say which image this version uses, whether it is there, and its Python packages.
    Status {
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Subcommand)]
pub(crate) enum RunsCommand {
    /// List earlier runs, newest first (as the desktop lists them).
    List {
        #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
        data_dir: Option<PathBuf>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Show a run's transcript (--json: its record, run.json, and the transcript's
    /// entries as data).
    Show {
        id: SessionId,
        #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
        data_dir: Option<PathBuf>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Copy a run (metadata, transcript, outputs, workspace archive) into DIR/<id>; or,
    /// with --notebook and/or --script, write its analysis into DIR (analysis.ipynb,
    /// analysis.py, and the inputs in DIR/input/); with --report FILE, write it as one
    /// HTML page to share (DIR is then optional).
    Export {
        id: SessionId,
        #[arg(required_unless_present = "report")]
        dir: Option<PathBuf>,
        /// Write a Jupyter notebook (nbformat 4.5) of the executed code.
        #[arg(long, requires = "dir")]
        notebook: bool,
        /// Write a plain Python script, runnable from the folder that holds input/.
        #[arg(long, requires = "dir")]
        script: bool,
        /// Write one self-contained HTML page as FILE: the answers, the report, the
        /// charts and tables, the code folded away, the provenance. It opens anywhere
        /// with no network; an existing FILE is not replaced.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        #[arg(long, value_name = "DIR", env = "SANDALYST_DATA_DIR")]
        data_dir: Option<PathBuf>,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use sandalyst::api::settings::{resolve, Settings};
    use sandalyst::api::ConfigFile;
    use std::path::Path;

    fn agent(args: &[&str]) -> AgentArgs {
        let argv = ["sandalyst", "chat"].iter().chain(args);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Chat(a) => a.agent,
            _ => unreachable!("a chat was parsed"),
        }
    }

    /// A command line with no flags and a desktop that never saved settings get the
    /// same session from the same config file: the same tools (the shell's default is
    /// the core's, written once) and the file's approvals and network.
    #[test]
    fn a_cli_session_with_no_flags_is_the_desktops_default_session() {
        let file = ConfigFile::parse(
            "approve = \"shell\"\nnetwork = \"allow:pypi.org\"\n",
            Path::new("config.toml"),
        )
        .unwrap();
        let cli = resolve(&agent(&[]).flags().choices, &file).unwrap().config;
        let page = Settings::from_config_file(&file);
        let desktop = resolve(&page.choices(), &file).unwrap().config;
        for c in [&cli, &desktop] {
            assert_eq!(c.tools, defaults().tools);
            assert_eq!(c.approval, api::ApprovalMode::Shell);
            assert_eq!(c.sandbox.network.to_string(), "allow:pypi.org");
        }
        assert_eq!(cli.limits.max_turns, desktop.limits.max_turns);
        assert_eq!(cli.sandbox.memory_bytes, desktop.sandbox.memory_bytes);
        assert_eq!(cli.sandbox.isolation, desktop.sandbox.isolation);
        for off in [&["--no-shell"][..], &["--shell", "false"]] {
            let c = resolve(&agent(off).flags().choices, &file).unwrap().config;
            assert!(!c.tools.shell && c.tools.python, "{off:?}");
        }
    }

    /// `--help` shows the core's defaults, read from `SessionConfig::default`.
    #[test]
    fn the_help_shows_the_cores_defaults() {
        let help = Cli::command()
            .find_subcommand_mut("chat")
            .unwrap()
            .render_help()
            .to_string();
        let d = defaults();
        for want in [
            "--shell <BOOL>".to_string(),
            format!("[default: {}]", d.tools.shell),
            format!("[default: {}]", d.limits.max_turns),
            format!("[default: {}]", d.sandbox.memory_bytes >> 20),
            format!("[default: {}]", d.sandbox.isolation),
        ] {
            assert!(help.contains(&want), "{want} in {help}");
        }
    }
}
