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

missing=""
command -v mmdebstrap >/dev/null 2>&1 || missing="$missing mmdebstrap"
# The offline image recipe fetches its pinned pyarrow wheel over HTTPS.
command -v curl >/dev/null 2>&1 || missing="$missing curl ca-certificates"
command -v docker >/dev/null 2>&1 || missing="$missing docker.io"
command -v ip >/dev/null 2>&1 || missing="$missing iproute2"
command -v cc >/dev/null 2>&1 || missing="$missing build-essential"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
if [ -n "$missing" ]; then
    say "installing system packages:$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        -o DPkg::Lock::Timeout=900 $missing >/dev/null
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
# offline sandboxes (`--isolation gvisor`), without restarting the daemon.
if [ "${1:-}" = "--gvisor" ]; then
    need=""
    command -v runsc >/dev/null 2>&1 || need="$need runsc"
    command -v python3 >/dev/null 2>&1 || need="$need python3"
    if [ -n "$need" ]; then
        say "installing gVisor:$need"
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
            -o DPkg::Lock::Timeout=900 $need >/dev/null \
            || die "cannot install$need (Debian packages runsc; elsewhere see https://gvisor.dev)"
    fi
    if ! docker info --format '{{json .Runtimes}}' | grep -q '"runsc"'; then
        say "registering runsc with the Docker engine"
        conf=/etc/docker/daemon.json
        $SUDO mkdir -p /etc/docker
        $SUDO python3 - "$conf" "$(command -v runsc)" <<'PY'
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
conf = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
# ptrace works without KVM; gVisor's own network off, as the sandbox has none.
conf.setdefault("runtimes", {})["runsc"] = {
    "path": runsc, "runtimeArgs": ["--platform=ptrace", "--network=none"]}
tmp = path + ".sandalyst"
with open(tmp, "w") as f:
    json.dump(conf, f, indent=2)
os.replace(tmp, path)
PY
        # dockerd reloads its runtimes on SIGHUP.
        pid=$(pidof dockerd) || die "no dockerd process to reload $conf (restart the engine)"
        $SUDO kill -HUP $pid
        i=0
        until docker info --format '{{json .Runtimes}}' | grep -q '"runsc"'; do
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
