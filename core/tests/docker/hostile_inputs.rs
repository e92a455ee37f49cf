//! Bad input refused at the door, through the real `sandalyst` binary, the real
//! engine and the real store: named pipes, sockets and devices given as inputs are
//! refused in one line without being opened; links inside an input folder are
//! followed when they stay inside it and left out otherwise, each said; and SIGTERM ends the process promptly while a
//! large input is staged or code runs, leaving no container of its run. Every child
//! is waited for with a generous bound, so a hang fails the test instead of CI.
#![cfg(unix)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longer than any of these commands needs; a hang fails at this bound.
const BOUND: Duration = Duration::from_secs(120);

/// The command, isolated from the developer's configuration and keys.
fn cli(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandalyst"));
    c.env(
        "SANDALYST_CONFIG",
        "/nonexistent/sandalyst-test-config.toml",
    )
    .env_remove("OPENAI_API_KEY")
    .env_remove("ANTHROPIC_API_KEY")
    .env_remove("SANDALYST_IMAGE")
    .env_remove("SANDALYST_STAGING")
    .env("SANDALYST_DATA_DIR", data)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

/// A replay model file of `steps`.
fn replay(dir: &Path, steps: serde_json::Value) -> String {
    let path = dir.join(format!("steps-{:08x}.json", rand::random::<u32>()));
    std::fs::write(&path, steps.to_string()).unwrap();
    format!("replay:{}", path.display())
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// A running child whose stderr lines are collected (with when each came) as they come.
struct Running {
    child: Child,
    lines: Arc<Mutex<Vec<(Instant, String)>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

struct Ended {
    code: Option<i32>,
    stdout: String,
    lines: Vec<(Instant, String)>,
    at: Instant,
}

impl Ended {
    fn stderr(&self) -> String {
        self.lines
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn when(&self, line_part: &str) -> Option<Instant> {
        self.lines
            .iter()
            .find(|(_, l)| l.contains(line_part))
            .map(|(t, _)| *t)
    }
}

impl Running {
    fn spawn(mut c: Command) -> Running {
        let mut child = c.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push((Instant::now(), line));
            }
        });
        Running {
            child,
            lines,
            reader: Some(reader),
        }
    }

    /// Wait until a stderr line contains `part` (within the bound).
    fn wait_for_line(&mut self, part: &str) {
        let start = Instant::now();
        while !self
            .lines
            .lock()
            .unwrap()
            .iter()
            .any(|(_, l)| l.contains(part))
        {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "exited ({status}) before printing {part:?}: {:?}",
                    self.lines
                );
            }
            assert!(
                start.elapsed() < BOUND,
                "no {part:?} line: {:?}",
                self.lines
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("sh")
            .args(["-c", &format!("kill -{sig} {}", self.child.id())])
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// The child's end, or a failed test (and a killed child) past `bound`.
    fn wait(mut self, bound: Duration) -> Ended {
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > bound {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "the process did not exit within {bound:?}: {:?}",
                    self.lines.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let at = Instant::now();
        self.reader.take().unwrap().join().unwrap();
        let mut stdout = String::new();
        std::io::Read::read_to_string(&mut self.child.stdout.take().unwrap(), &mut stdout).unwrap();
        let lines = std::mem::take(&mut *self.lines.lock().unwrap());
        Ended {
            code: status.code(),
            stdout,
            lines,
            at,
        }
    }
}

/// The one session folder under `data`, once it exists.
/// Bytes the process `pid` has read so far (files and sockets alike), from /proc.
fn read_bytes(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    io.lines()
        .find_map(|l| l.strip_prefix("rchar:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

fn session_id(data: &Path) -> Option<String> {
    std::fs::read_dir(data)
        .ok()?
        .filter_map(|e| e.ok())
        .find(|e| e.path().join("run.json").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
}

async fn containers(id: &str) -> usize {
    let docker = common::engine().await;
    common::containers_labelled(&docker, id).await
}

/// The refusal is the command's one error line, and the exit code is 1.
fn refused_in_one_line(e: &Ended, expected: &str) {
    let stderr = e.stderr();
    assert_eq!(e.code, Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors, [format!("error: {expected}")], "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_given_as_input_is_refused_in_one_line_and_never_opened() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let fifo = dir.path().join("p");
    mkfifo(&fifo);
    // A writer waiting on the FIFO: its open returns only once someone opens the
    // FIFO for reading, so it tells whether the command did (even without blocking).
    let (tx, opened) = std::sync::mpsc::channel();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let f = std::fs::OpenOptions::new().write(true).open(&fifo);
            tx.send(f.is_ok()).unwrap();
        })
    };
    let model = replay(dir.path(), serde_json::json!([{ "say": "never asked" }]));
    let expected = format!(
        "input {} is a named pipe (FIFO); only regular files and folders can be staged",
        fifo.display()
    );
    let mut run = cli(&data);
    run.args(["run", "-p", "look", "--model", &model, "-i"])
        .arg(&fifo);
    let e = Running::spawn(run).wait(BOUND);
    refused_in_one_line(&e, &expected);
    assert!(session_id(&data).is_none(), "no session for a refused run");

    // The conversation commands refuse it the same way.
    let mut chat = cli(&data);
    chat.args(["chat", "--model", &model, "-i"]).arg(&fifo);
    let e = Running::spawn(chat).wait(BOUND);
    refused_in_one_line(&e, &expected);

    assert!(
        opened.recv_timeout(Duration::from_millis(300)).is_err(),
        "the command opened the FIFO"
    );
    // Our own reader lets the writer go, which shows the check above could fail.
    let _reader = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap()
    };
    assert!(opened.recv_timeout(Duration::from_secs(10)).unwrap());
    writer.join().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_socket_and_a_device_given_as_inputs_are_refused_in_one_line() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let sock = dir.path().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let model = replay(dir.path(), serde_json::json!([{ "say": "never asked" }]));
    let mut run = cli(&data);
    run.args(["run", "-p", "look", "--model", &model, "-i"])
        .arg(&sock);
    let e = Running::spawn(run).wait(BOUND);
    refused_in_one_line(
        &e,
        &format!(
            "input {} is a socket; only regular files and folders can be staged",
            sock.display()
        ),
    );

    let mut run = cli(&data);
    run.args(["run", "-p", "look", "--model", &model, "-i", "/dev/zero"]);
    let e = Running::spawn(run).wait(BOUND);
    refused_in_one_line(
        &e,
        "input /dev/zero is a character device; only regular files and folders can be staged",
    );
    // A link to the device, given as the input, is refused for what it leads to.
    let link = dir.path().join("zero.csv");
    symlink("/dev/zero", &link).unwrap();
    let mut run = cli(&data);
    run.args(["run", "-p", "look", "--model", &model, "-i"])
        .arg(&link);
    let e = Running::spawn(run).wait(BOUND);
    refused_in_one_line(
        &e,
        &format!(
            "input {} is a character device; only regular files and folders can be staged",
            link.display()
        ),
    );
    assert!(session_id(&data).is_none());
}

/// Links inside an input folder: to a file and a folder outside it, followed and
/// said; dangling, to /dev/zero, in a loop, back into the folder: left out with the
/// reason said; a FIFO in the folder left out too. The sandbox sees exactly the
/// followed files, and the process exits once the ask has finished.
#[tokio::test(flavor = "multi_thread")]
async fn links_in_an_input_folder_are_followed_or_left_out_and_each_is_said() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let outside = dir.path().join("elsewhere");
    std::fs::create_dir_all(outside.join("more")).unwrap();
    std::fs::write(outside.join("x.csv"), "x-content").unwrap();
    std::fs::write(outside.join("more/y.csv"), "y-content").unwrap();
    // A home of its own: the key a link in the folder leads to.
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "KEY-content").unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.csv"), "a-content").unwrap();
    symlink(outside.join("x.csv"), docs.join("latest.csv")).unwrap();
    symlink(outside.join("more"), docs.join("more")).unwrap();
    symlink("/etc/shadow", docs.join("shadow")).unwrap();
    symlink(home.join(".ssh/id_ed25519"), docs.join("key")).unwrap();
    symlink("/nonexistent/gone.csv", docs.join("gone.csv")).unwrap();
    symlink("/dev/zero", docs.join("zero")).unwrap();
    symlink(docs.join("loop2"), docs.join("loop1")).unwrap();
    symlink(docs.join("loop1"), docs.join("loop2")).unwrap();
    symlink(".", docs.join("self")).unwrap();
    symlink("a.csv", docs.join("alias.csv")).unwrap();
    mkfifo(&docs.join("pipe"));

    let listing = "import os\nrows = []\nfor d, _, fs in os.walk('input'):\n    for f in fs:\n        p = os.path.join(d, f)\n        rows.append(p + ' ' + open(p).read().strip())\nopen('output/listing.txt', 'w').write('\\n'.join(sorted(rows)))\nprint(len(rows))";
    let steps = serde_json::json!([{ "python": listing }, { "say": "listed" }]);
    let canon = outside.canonicalize().unwrap();
    let d = docs.canonicalize().unwrap();
    let left_outside = |name: &str, target: &Path| {
        format!(
            "left out input/docs/{name}: it is a link to {}, outside the folder; links that leave a dropped folder are not followed (to include it, add the target itself, or set follow_links = \"outside\" in config.toml",
            target.display()
        )
    };

    // As it comes: only what is inside the folder; the links that leave it are named.
    let model = replay(dir.path(), steps.clone());
    let mut run = cli(&data);
    run.env("HOME", &home)
        .args(["run", "-p", "list the inputs", "--model", &model, "-i"])
        .arg(&docs);
    let e = Running::spawn(run).wait(BOUND);
    let stderr = e.stderr();
    assert_eq!(e.code, Some(0), "{stderr}");
    for said in [
        left_outside("latest.csv", &canon.join("x.csv")),
        left_outside("more", &canon.join("more")),
        left_outside("shadow", Path::new("/etc/shadow")),
        left_outside("key", &home.canonicalize().unwrap().join(".ssh/id_ed25519")),
        format!(
            "input/docs/alias.csv -> {} (a link, followed)",
            d.join("a.csv").display()
        ),
        "left out input/docs/gone.csv: it is a link to /nonexistent/gone.csv, which does not exist".into(),
        "left out input/docs/zero: it is a link to /dev/zero, which is a character device; only regular files and folders can be staged".into(),
        format!(
            "left out input/docs/loop1: it is a link to {}, which leads back to itself (a loop)",
            docs.join("loop2").display()
        ),
        format!(
            "left out input/docs/self: it is a link to {}, which leads back to itself (a loop)",
            d.display()
        ),
        "left out input/docs/pipe: it is a named pipe (FIFO); only regular files and folders can be staged".into(),
    ] {
        assert!(stderr.contains(&said), "not said: {said}\n{stderr}");
    }
    let outputs = PathBuf::from(e.stdout.trim());
    let seen = std::fs::read_to_string(outputs.join("listing.txt")).unwrap();
    assert_eq!(
        seen,
        "input/docs/a.csv a-content\ninput/docs/alias.csv a-content"
    );
    // Nothing hashes or reads a device after the ask: the process ends with it.
    let finished = e.when("ask finished").expect("ask finished");
    let after = e.at.duration_since(finished);
    eprintln!("exited {after:?} after \"ask finished\"");
    assert!(
        after < Duration::from_secs(30),
        "exited {after:?} after the ask"
    );
    let id = session_id(&data).unwrap();
    assert_eq!(containers(&id).await, 0);

    // With follow_links = "outside" in the config file, the links that leave it are
    // followed too (the key and /etc/shadow taken out of the folder for this run).
    std::fs::remove_file(docs.join("key")).unwrap();
    std::fs::remove_file(docs.join("shadow")).unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "follow_links = \"outside\"\n").unwrap();
    let model = replay(dir.path(), steps);
    let data2 = dir.path().join("data2");
    let mut run = cli(&data2);
    run.env("SANDALYST_CONFIG", &config)
        .args(["run", "-p", "list the inputs", "--model", &model, "-i"])
        .arg(&docs);
    let e = Running::spawn(run).wait(BOUND);
    let stderr = e.stderr();
    assert_eq!(e.code, Some(0), "{stderr}");
    let said = format!(
        "input/docs/latest.csv -> {} (a link, followed)",
        canon.join("x.csv").display()
    );
    assert!(stderr.contains(&said), "not said: {said}\n{stderr}");
    let seen = std::fs::read_to_string(PathBuf::from(e.stdout.trim()).join("listing.txt")).unwrap();
    assert_eq!(
        seen,
        "input/docs/a.csv a-content\ninput/docs/alias.csv a-content\ninput/docs/latest.csv x-content\ninput/docs/more/y.csv y-content"
    );
}

/// SIGTERM while a large input is being copied into the workspace: the staging
/// stops, the container and volume go, and the process exits 130 within seconds.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_while_a_large_input_is_staged_exits_promptly_and_leaves_no_container() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let big = dir.path().join("big.csv");
    // Sparse: 3 GiB to copy, next to nothing on the disk.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let model = replay(
        dir.path(),
        serde_json::json!([{ "python": "print('staged')" }, { "say": "done" }]),
    );
    let mut run = cli(&data);
    run.env("SANDALYST_STAGING", "copy")
        .args(["run", "-p", "look", "--model", &model, "-i"])
        .arg(&big);
    let mut child = Running::spawn(run);
    child.wait_for_line("staging 1 input file(s)");
    // The container exists and the upload is under way.
    let start = Instant::now();
    let id = loop {
        if let Some(id) = session_id(&data) {
            if containers(&id).await > 0 {
                break id;
            }
        }
        assert!(start.elapsed() < BOUND, "no container came");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // The upload is under way once the process has read a good part of the input.
    let pid = child.child.id();
    while read_bytes(pid) < 64 << 20 {
        assert!(start.elapsed() < BOUND, "the input is not being read");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let sent = Instant::now();
    child.signal("TERM");
    let e = tokio::task::spawn_blocking(move || child.wait(BOUND))
        .await
        .unwrap();
    let stderr = e.stderr();
    let took = e.at.duration_since(sent);
    eprintln!("exited {took:?} after SIGTERM during staging");
    assert_eq!(e.code, Some(130), "{stderr}");
    assert!(
        !stderr.contains("sandbox ready"),
        "the signal came after staging: {stderr}"
    );
    assert!(
        took < Duration::from_secs(15),
        "exited {took:?} after SIGTERM"
    );
    assert_eq!(containers(&id).await, 0, "container left: {stderr}");
    let meta = std::fs::read_to_string(data.join(&id).join("run.json")).unwrap();
    assert!(meta.contains("\"cancelled\""), "{meta}");
}

/// SIGTERM in a chat while a cell runs (stdin still open): the cell is interrupted,
/// the chat ends instead of waiting for the next line, the container goes, exit 130.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_during_a_running_cell_of_a_chat_ends_it_and_leaves_no_container() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = dir.path().join("energy.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let model = replay(
        dir.path(),
        // Printed as "now sleeping", a line its source (shown too with -v) does not hold.
        serde_json::json!([{ "python": "import time\nprint('now', 'sleeping', flush=True)\ntime.sleep(300)" }]),
    );
    let mut chat = cli(&data);
    chat.stdin(Stdio::piped())
        .args(["chat", "-v", "--model", &model, "-i"])
        .arg(&input);
    let mut child = Running::spawn(chat);
    let mut stdin = child.child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"sleep a while\n").unwrap();
    // The cell's own line (shown with -v): the cell runs, not just its heading.
    child.wait_for_line("now sleeping");
    let id = session_id(&data).unwrap();
    assert_eq!(containers(&id).await, 1);
    let sent = Instant::now();
    child.signal("TERM");
    let e = tokio::task::spawn_blocking(move || child.wait(BOUND))
        .await
        .unwrap();
    drop(stdin);
    let stderr = e.stderr();
    let took = e.at.duration_since(sent);
    eprintln!("exited {took:?} after SIGTERM during a cell");
    assert_eq!(e.code, Some(130), "{stderr}");
    assert!(stderr.contains("ask cancelled"), "{stderr}");
    assert!(
        took < Duration::from_secs(15),
        "exited {took:?} after SIGTERM"
    );
    assert_eq!(containers(&id).await, 0, "container left: {stderr}");
}

/// A large input is still being hashed (for provenance) when a quick ask ends: the
/// hash stops with the session, so the process exits right after "ask finished".
#[tokio::test(flavor = "multi_thread")]
async fn a_hash_of_a_large_input_does_not_hold_the_exit() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let big = dir.path().join("big.csv");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let model = replay(dir.path(), serde_json::json!([{ "say": "nothing to do" }]));
    let mut run = cli(&data);
    run.args(["run", "-p", "look", "--model", &model, "-i"])
        .arg(&big);
    let e = Running::spawn(run).wait(BOUND);
    let stderr = e.stderr();
    assert_eq!(e.code, Some(0), "{stderr}");
    let finished = e.when("ask finished").expect("ask finished");
    let after = e.at.duration_since(finished);
    eprintln!("exited {after:?} after \"ask finished\" with a 1 GiB input");
    assert!(
        after < Duration::from_secs(10),
        "exited {after:?} after the ask"
    );
    let id = session_id(&data).unwrap();
    assert_eq!(containers(&id).await, 0);
}

/// Between asks a chat waits for its next line; SIGTERM then closes the session
/// (its warm container removed) and exits 130, instead of quitting with it left.
/// A second signal while the first one's clean-up runs quits at once.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_ends_an_idle_chat_cleanly_and_a_second_signal_quits_at_once() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = dir.path().join("energy.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let model = replay(
        dir.path(),
        serde_json::json!([{ "python": "import time\nprint('sleeping', flush=True)\ntime.sleep(300)" }]),
    );
    let chat = |data: &Path| {
        let mut c = cli(data);
        c.stdin(Stdio::piped())
            .args(["chat", "--model", &model, "-i"])
            .arg(&input);
        Running::spawn(c)
    };
    let mut idle = chat(&data);
    let stdin = idle.child.stdin.take().unwrap();
    idle.wait_for_line("sandbox ready");
    let id = session_id(&data).unwrap();
    assert_eq!(containers(&id).await, 1);
    idle.signal("TERM");
    let e = tokio::task::spawn_blocking(move || idle.wait(BOUND))
        .await
        .unwrap();
    drop(stdin);
    assert_eq!(e.code, Some(130), "{}", e.stderr());
    assert!(
        e.stderr().contains(&format!("session {id} kept")),
        "{}",
        e.stderr()
    );
    assert_eq!(containers(&id).await, 0, "{}", e.stderr());

    let data2 = dir.path().join("data2");
    let mut busy = chat(&data2);
    let mut stdin = busy.child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"sleep\n").unwrap();
    busy.wait_for_line("python:");
    let id = session_id(&data2).unwrap();
    busy.signal("TERM");
    busy.signal("TERM");
    let sent = Instant::now();
    let e = tokio::task::spawn_blocking(move || busy.wait(BOUND))
        .await
        .unwrap();
    drop(stdin);
    assert_eq!(e.code, Some(130), "{}", e.stderr());
    let took = e.at.duration_since(sent);
    eprintln!("exited {took:?} after a second SIGTERM");
    assert!(
        took < Duration::from_secs(5),
        "exited {took:?} after two signals"
    );
    // Quitting at once leaves the container to stop by itself (its lease closed);
    // this test removes what its own run left.
    let docker = common::engine().await;
    for c in sandalyst::sandbox::docker::containers_of_run(&docker, &id)
        .await
        .unwrap()
    {
        let opts = bollard::query_parameters::RemoveContainerOptionsBuilder::new()
            .force(true)
            .v(true)
            .build();
        let _ = docker.remove_container(&c, Some(opts)).await;
    }
    let filters = std::collections::HashMap::from([(
        "label".to_string(),
        vec![format!("{}={id}", sandalyst::sandbox::docker::RUN_LABEL)],
    )]);
    let vols = docker
        .list_volumes(Some(
            bollard::query_parameters::ListVolumesOptionsBuilder::new()
                .filters(&filters)
                .build(),
        ))
        .await
        .unwrap();
    for v in vols.volumes.unwrap_or_default() {
        let _ = docker
            .remove_volume(
                &v.name,
                None::<bollard::query_parameters::RemoveVolumeOptions>,
            )
            .await;
    }
}

/// Ctrl-C in a chat stops only the running ask: the chat is still there past the
/// grace period that bounds an exit's clean-up, and answers the next ask.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_in_a_chat_stops_the_ask_and_the_chat_goes_on() {
    let Some(_engine) = common::engine_or_skip().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let input = dir.path().join("energy.csv");
    std::fs::write(&input, "t,v\n1,2\n").unwrap();
    let model = replay(
        dir.path(),
        // The replay starts again with each ask: the first sleeps, the next does not.
        serde_json::json!([
            { "python": "import os, time\nif os.path.exists('/tmp/slept'):\n    print('second', 'ask ran')\nelse:\n    open('/tmp/slept', 'w').close()\n    print('marked', '/tmp', flush=True)\n    time.sleep(300)" },
            { "say": "done" }
        ]),
    );
    let mut chat = cli(&data);
    chat.stdin(Stdio::piped())
        .args(["chat", "-v", "--model", &model, "-i"])
        .arg(&input);
    let mut child = Running::spawn(chat);
    let mut stdin = child.child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"sleep a while\n").unwrap();
    // The cell's own output (shown with -v), not the call's heading: under load the
    // kernel may still be starting when the heading prints, and an interrupt then
    // stops the cell before it marks /tmp, so the second ask would sleep too (the
    // printed line differs from its source, which -v shows too).
    child.wait_for_line("marked /tmp");
    child.signal("INT");
    child.wait_for_line("ask cancelled");
    // Longer than the 10 s that an exiting process gives its clean-up.
    tokio::time::sleep(Duration::from_secs(12)).await;
    std::io::Write::write_all(&mut stdin, b"go on\n").unwrap();
    drop(stdin);
    let e = tokio::task::spawn_blocking(move || child.wait(BOUND))
        .await
        .unwrap();
    let stderr = e.stderr();
    assert!(stderr.contains("second ask ran"), "{stderr}");
    assert!(!stderr.contains("did not finish"), "{stderr}");
    assert_eq!(e.code, Some(0), "{stderr}");
}
