#!/bin/sh
# Idempotent set-up on Debian/Ubuntu: the system packages Sandalyst needs, a running
# Docker engine, the `sandalyst` binary and the sandbox image. A second run only
# checks and returns in seconds.
set -eu
cd "$(dirname "$0")/.."

say() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# --gvisor: register runsc (below); --tests: also what the test suite needs.
gvisor=""
tests=""
for arg in "$@"; do
    case "$arg" in
        --gvisor) gvisor=1 ;;
        --tests) tests=1 ;;
        *) die "unknown option $arg (use --gvisor, --tests)" ;;
    esac
done

missing=""
command -v mmdebstrap >/dev/null 2>&1 || missing="$missing mmdebstrap"
# The offline image recipe fetches its pinned pyarrow wheel over HTTPS.
command -v curl >/dev/null 2>&1 || missing="$missing curl ca-certificates"
command -v docker >/dev/null 2>&1 || missing="$missing docker.io"
command -v ip >/dev/null 2>&1 || missing="$missing iproute2"
command -v cc >/dev/null 2>&1 || missing="$missing build-essential"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
# The engine tests (--tests): ssh:// engines through an sshd of their own on 127.0.0.1.
sshd_new=""
if [ -n "$tests" ]; then
    { command -v ssh && command -v ssh-keygen; } >/dev/null 2>&1 || missing="$missing openssh-client"
    [ -x /usr/sbin/sshd ] || { missing="$missing openssh-server"; sshd_new=1; }
    # The keychain test: a real Secret Service (gnome-keyring on a bus of the test's
    # own) and libsecret's secret-tool to read it; 2.3 MB to fetch.
    command -v gnome-keyring-daemon >/dev/null 2>&1 || missing="$missing gnome-keyring"
    command -v secret-tool >/dev/null 2>&1 || missing="$missing libsecret-tools"
fi
if [ -n "$missing" ]; then
    say "installing system packages:$missing"
    $SUDO apt-get update -qq
    # openssh-server's package would start a system sshd on port 22: the tests start
    # their own on 127.0.0.1, so the package's service is not started here.
    policy=""
    if [ -n "$sshd_new" ] && [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
        $SUDO chmod 755 "$policy"
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        -o DPkg::Lock::Timeout=900 $missing >/dev/null || { [ -z "$policy" ] || $SUDO rm -f "$policy"; exit 1; }
    [ -z "$policy" ] || $SUDO rm -f "$policy"
    # Nor enabled for the next boot, where this script installed it.
    if [ -n "$sshd_new" ] && [ -d /run/systemd/system ]; then
        $SUDO systemctl disable ssh.service >/dev/null 2>&1 || true
    fi
fi

# A Docker engine that answers (DOCKER_HOST is honoured by docker and by sandalyst).
if ! docker info >/dev/null 2>&1; then
    if [ -n "${DOCKER_HOST:-}" ]; then
        die "no Docker engine answers at DOCKER_HOST=$DOCKER_HOST"
    fi
    say "starting the Docker engine"
    if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
        $SUDO systemctl start docker || true
    fi
    if ! docker info >/dev/null 2>&1; then
        $SUDO sh -c 'setsid nohup dockerd >/var/log/sandalyst-dockerd.log 2>&1 &'
    fi
    i=0
    until docker info >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -le 60 ] || die "the Docker engine did not start; see /var/log/sandalyst-dockerd.log"
        sleep 1
    done
fi

# --gvisor: Debian's runsc, registered with the engine as the `runsc` runtime for
# offline sandboxes (`--isolation gvisor`), without restarting the daemon. Debian 12's
# own runsc (2022-12) fails `stat` on volumes (EINVAL); bookworm-backports has the
# 2024-07 one, which does not, and which has the faster systrap platform.
runsc_date() { runsc --version 2>/dev/null | sed -n 's/.*\([0-9]\{8\}\).*/\1/p' | head -n1; }
if [ -n "$gvisor" ]; then
    if ! command -v python3 >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
            -o DPkg::Lock::Timeout=900 python3 >/dev/null || die "cannot install python3"
    fi
    if [ "$(runsc_date)" \< "20230601" ] && grep -qs 'VERSION_CODENAME=bookworm' /etc/os-release; then
        list=/etc/apt/sources.list.d/sandalyst-bookworm-backports.list
        if ! apt-cache policy runsc 2>/dev/null | grep -q bookworm-backports; then
            say "adding bookworm-backports (for gVisor's runsc only; other packages stay on bookworm)"
            echo "deb http://deb.debian.org/debian bookworm-backports main" | $SUDO tee "$list" >/dev/null
            $SUDO apt-get update -qq -o DPkg::Lock::Timeout=900 >/dev/null
        fi
        say "installing gVisor: runsc from bookworm-backports"
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
            -o DPkg::Lock::Timeout=900 -t bookworm-backports runsc >/dev/null \
            || die "cannot install runsc from bookworm-backports"
    elif ! command -v runsc >/dev/null 2>&1; then
        say "installing gVisor: runsc"
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
            -o DPkg::Lock::Timeout=900 runsc >/dev/null \
            || die "cannot install runsc (Debian packages it; elsewhere see https://gvisor.dev)"
    fi
    # systrap (2023 on) is faster than ptrace; both work without KVM.
    platform=ptrace
    [ "$(runsc_date)" \< "20230601" ] || platform=systrap
    conf=/etc/docker/daemon.json
    $SUDO mkdir -p /etc/docker
    changed=$($SUDO python3 - "$conf" "$(command -v runsc)" "$platform" <<'PY'
import json, os, sys
path, runsc, platform = sys.argv[1:4]
conf = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
# gVisor's own network off, as the sandbox has none.
want = {"path": runsc, "runtimeArgs": ["--platform=" + platform, "--network=none"]}
if conf.get("runtimes", {}).get("runsc") != want:
    conf.setdefault("runtimes", {})["runsc"] = want
    tmp = path + ".sandalyst"
    with open(tmp, "w") as f:
        json.dump(conf, f, indent=2)
    os.replace(tmp, path)
    print("yes")
PY
)
    if [ -n "$changed" ] || ! docker info --format '{{json .Runtimes}}' | grep -q "platform=$platform"; then
        say "registering runsc ($platform) with the Docker engine"
        # dockerd reloads its runtimes on SIGHUP.
        pid=$(pidof dockerd) || die "no dockerd process to reload $conf (restart the engine)"
        $SUDO kill -HUP $pid
        i=0
        until docker info --format '{{json .Runtimes}}' | grep -q "platform=$platform"; do
            i=$((i + 1))
            [ $i -le 20 ] || die "dockerd did not take the runsc runtime from $conf"
            sleep 0.5
        done
    fi
fi

[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
command -v cargo >/dev/null 2>&1 \
    || die "Rust is needed (cargo not found): install it with rustup (https://rustup.rs) and retry"

say "building sandalyst"
cargo build --quiet --bin sandalyst
BIN="${CARGO_TARGET_DIR:-target}/debug/sandalyst"

# Builds only when the image for this version of docker/ is missing.
"$BIN" image build >/dev/null
