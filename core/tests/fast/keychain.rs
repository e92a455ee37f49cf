//! The keychain code against a real Secret Service: Debian's gnome-keyring on a D-Bus
//! session bus of the test's own (dbus-daemon), its login keyring created and unlocked
//! with a known password (`gnome-keyring-daemon --unlock`), in a temporary HOME.
//!
//! The keychain store is opened once per process on the session bus of its
//! environment, so each step runs in a child process of this test binary
//! ([`one_keychain_step_in_a_child_process`]) on the test's bus: a key stored by one
//! process is read by the next, as the app stores it and the command line reads it.
//! `secret-tool` (libsecret) reads the service on its own between the steps. Skipped,
//! with the packages to install, where gnome-keyring is missing.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sandalyst::model::config;

/// Which step the child runs, and the account it works on.
const STEP: &str = "SANDALYST_TEST_KEYCHAIN_STEP";
/// Where the child's line saying how the step went starts.
const OUTCOME: &str = "keychain: ";
/// The keychain account the app stores an OpenAI key under.
const ACCOUNT: &str = "openai";
const KEY: &str = "sk-test-0123456789abcdefghij";
const PASSWORD: &str = "sandalyst-test-password";

/// A session bus with gnome-keyring's Secret Service on it, in a temporary HOME.
struct SecretService {
    address: String,
    bus: Child,
    keyring: Child,
    home: tempfile::TempDir,
}

impl SecretService {
    /// Started, with the login keyring unlocked; `None` (after saying why) where the
    /// programs are missing.
    fn start() -> Option<SecretService> {
        for (program, package) in [
            ("dbus-daemon", "dbus-daemon"),
            ("dbus-send", "dbus-bin"),
            ("gnome-keyring-daemon", "gnome-keyring"),
            ("secret-tool", "libsecret-tools"),
        ] {
            if !on_path(program) {
                eprintln!(
                    "skipped {}: {program} is not installed (package {package}; scripts/setup.sh --tests installs gnome-keyring and libsecret-tools)",
                    std::thread::current().name().unwrap_or("the keychain test")
                );
                return None;
            }
        }
        let home = tempfile::tempdir().unwrap();
        let runtime = home.path().join("run");
        std::fs::create_dir(&runtime).unwrap();
        // gnome-keyring keeps its control socket there and wants it private.
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut address = String::new();
        let _ = BufReader::new(bus.stdout.take().unwrap()).read_line(&mut address);
        let address = address.trim().to_string();
        assert!(address.starts_with("unix:"), "dbus-daemon gave no address");
        // --unlock reads the password on stdin; with no login keyring yet, it creates
        // one with that password (and makes it the default collection).
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--foreground", "--unlock", "--components=secrets"])
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .env("HOME", home.path())
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("XDG_DATA_HOME", home.path().join("share"))
            .env_remove("GNOME_KEYRING_CONTROL")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = keyring.stdin.take().unwrap();
        stdin.write_all(PASSWORD.as_bytes()).unwrap();
        drop(stdin);
        let service = SecretService {
            address,
            bus,
            keyring,
            home,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !service.owns("org.freedesktop.secrets") {
            assert!(
                Instant::now() < deadline,
                "gnome-keyring-daemon did not take org.freedesktop.secrets"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(service)
    }

    fn owns(&self, name: &str) -> bool {
        let out = Command::new("dbus-send")
            .args([
                &format!("--bus={}", self.address),
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                &format!("string:{name}"),
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).contains("boolean true")
    }

    /// What `secret-tool` finds for the app's entry of `account` (service `sandalyst`),
    /// read through libsecret, not through the code under test.
    fn lookup(&self, account: &str) -> Option<String> {
        let out = self
            .command("secret-tool")
            .args(["lookup", "service", "sandalyst", "username", account])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .env("HOME", self.home.path())
            .env("XDG_RUNTIME_DIR", self.home.path().join("run"));
        c
    }

    /// One step of [`one_keychain_step_in_a_child_process`] on this bus; its outcome.
    fn step(&self, step: &str) -> String {
        let out = self
            .command(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "keychain::one_keychain_step_in_a_child_process",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(STEP, step)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "the {step} step did not run:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The harness prints the test's name on the same line.
        let outcome: Vec<String> = stdout
            .lines()
            .filter_map(|l| {
                l.find(OUTCOME)
                    .map(|at| l[at + OUTCOME.len()..].to_string())
            })
            .collect();
        assert!(
            !outcome.is_empty(),
            "the {step} step said nothing:\n{stdout}"
        );
        outcome.join(" | ")
    }
}

impl Drop for SecretService {
    fn drop(&mut self) {
        for c in [&mut self.keyring, &mut self.bus] {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| Path::new(&d).join(program).is_file())
    })
}

/// The child's side: one step against the Secret Service of its session bus.
#[tokio::test]
#[ignore = "run by the keychain test in a process of its own, on its own session bus"]
async fn one_keychain_step_in_a_child_process() {
    let step = std::env::var(STEP).expect("run by the keychain test only");
    let found = || config::keychain_lookup(ACCOUNT).unwrap_or_else(|| "none".into());
    match step.as_str() {
        // As the settings page stores a key: the provider's account, the masked key back.
        "store" => {
            let masked = sandalyst::api::settings::save_api_key(ACCOUNT.into(), KEY.into())
                .await
                .unwrap();
            println!("{OUTCOME}stored, shown as {masked}");
        }
        "read" => {
            let status = sandalyst::api::settings::api_key_status(ACCOUNT.into()).await;
            println!(
                "{OUTCOME}found {}, shown as {}",
                found(),
                status.unwrap_or_else(|| "none".into())
            );
        }
        "delete" => {
            let first = config::keychain_delete(ACCOUNT).unwrap();
            let after = found();
            let again = config::keychain_delete(ACCOUNT).unwrap();
            println!("{OUTCOME}removed {first}, then found {after}, removed again {again}");
        }
        other => panic!("unknown step {other}"),
    }
}

#[test]
fn an_api_key_is_stored_read_and_removed_in_a_real_secret_service() {
    let Some(service) = SecretService::start() else {
        return;
    };
    assert_eq!(service.lookup(ACCOUNT), None, "a fresh keyring has no key");

    let stored = service.step("store");
    assert!(stored.starts_with("stored, shown as "), "{stored}");
    assert!(
        !stored.contains(KEY),
        "the key is shown only masked: {stored}"
    );
    // The key is in the service, under service `sandalyst` and the provider's account.
    assert_eq!(service.lookup(ACCOUNT).as_deref(), Some(KEY));

    // Another process (the command line, after the app stored it) reads it.
    let read = service.step("read");
    let masked = stored.trim_start_matches("stored, shown as ");
    assert_eq!(read, format!("found {KEY}, shown as {masked}"));

    let deleted = service.step("delete");
    assert_eq!(
        deleted,
        "removed true, then found none, removed again false"
    );
    assert_eq!(
        service.lookup(ACCOUNT),
        None,
        "the key is still in the service"
    );
    assert_eq!(service.step("read"), "found none, shown as none");
}
