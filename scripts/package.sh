#!/bin/sh
# Build the desktop app's Linux packages, a .deb (Tauri's bundler) and an AppImage
# beside it, check them, and start each under Xvfb until it draws its first content.
#
#   scripts/package.sh               build both, check both (scripts/check-package.sh),
#                                    write the command line's man pages and bash, zsh
#                                    and fish completions under <bundle>/cli/,
#                                    install the .deb and start it (with the launch time
#                                    and the memory of all its processes after 20 s
#                                    idle, for BENCHMARKS.md)
#   scripts/package.sh --no-install  build both and check both
#   scripts/package.sh --debug ...   the same from a debug build (minutes instead of a
#                                    release build's quarter of an hour)
#   scripts/package.sh --appimage-only [--debug]
#                                    the AppImage alone, from `cargo build` (no tauri-cli)
#
# scripts/check-package.sh checks what was built without installing it: the .deb's
# desktop entry (desktop-file-validate, `Exec=... %F` for files from the file manager,
# `MimeType=` with every type of the bundle's file associations), the Parquet MIME type
# it ships (Debian 12's shared-mime-info has none), and each package's binary started
# under Xvfb until it draws its window (screenshots in target/<profile>/bundle/check/).
#
# The AppImage: Tauri's AppImage bundler downloads linuxdeploy and its plugins from
# GitHub, which a machine that reaches only the package registries cannot. So it is
# assembled here: an AppDir with the bundler's binary, desktop entry and icons, packed
# with mksquashfs (Debian's squashfs-tools) behind the AppImage type-2 runtime that the
# `appimage` crate on crates.io ships (fetched with cargo, checked against its SHA-256).
# Unlike linuxdeploy's, it bundles no libraries: it runs where WebKitGTK 4.1 is
# installed (Debian 12, Ubuntu 22.04 and later, Fedora 36 and later). That runtime
# mounts the image with libfuse2 where it can; the check here extracts and runs it
# (`--appimage-extract-and-run`), which needs no FUSE.
#
# Needs the desktop's build packages (scripts/setup-desktop.sh) and, once, tauri-cli
# from crates.io (installed here if missing; a few minutes).
set -eu
cd "$(dirname "$0")/.."
say() { echo "package: $*" >&2; }
die() { echo "package: error: $*" >&2; exit 1; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

INSTALL=1
DEB_TOO=1
PROFILE=release
FLAGS=""
for a in "$@"; do
    case "$a" in
        --no-install) INSTALL=0 ;;
        --appimage-only) DEB_TOO=0; INSTALL=0 ;;
        --debug) PROFILE=debug; FLAGS="--debug" ;;
        *) die "unknown option $a (--no-install, --appimage-only, --debug)" ;;
    esac
done

scripts/setup-desktop.sh
for p in squashfs-tools desktop-file-utils; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || {
        say "installing $p"
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
            -o DPkg::Lock::Timeout=900 "$p" >/dev/null
    }
done
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
if [ $DEB_TOO -eq 1 ] && ! cargo tauri --version >/dev/null 2>&1; then
    say "installing tauri-cli (once)"
    cargo install tauri-cli --version "^2" --locked
fi

WORK=$(mktemp -d)
XVFB=""
APP=""
cleanup() {
    [ -n "$APP" ] && kill "$APP" 2>/dev/null || true
    [ -n "$XVFB" ] && kill "$XVFB" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# The mock runtime (tauri's `test` feature) is for the tests only: a dev-dependency,
# which a build of the app alone leaves out. Checked before the long build starts.
if cargo tree -p sandalyst-desktop -e normal,build,features -i tauri --depth 1 \
    | grep -q 'tauri feature "test"'; then
    die "tauri's test feature (the mock runtime) would be in the app: keep it in src-tauri's [dev-dependencies]"
fi

# ---- the .deb ----
TARGET=${CARGO_TARGET_DIR:-target}
BUNDLE="$TARGET/$PROFILE/bundle"
if [ $DEB_TOO -eq 1 ]; then
    say "building the .deb ($(cargo tauri --version), $PROFILE)"
    # shellcheck disable=SC2086
    (cd src-tauri && cargo tauri build $FLAGS --bundles deb)
    DEB=$(ls -t "$BUNDLE"/deb/*.deb 2>/dev/null | head -1)
    [ -n "$DEB" ] || die "no .deb under $BUNDLE/deb/"
    say "built $DEB ($(du -h "$DEB" | cut -f1))"
else
    say "building the app alone ($PROFILE)"
    if [ $PROFILE = release ]; then
        cargo build --release -p sandalyst-desktop --features custom-protocol
    else
        cargo build -p sandalyst-desktop
    fi
fi

# ---- the AppImage ----
# The runtime from the `appimage` crate (crates.io), pinned by version and digest.
RUNTIME_SHA=328e0d745c5c6817048c27bc3e8314871703f8f47ffa81a37cb06cd95a94b323
mkdir -p "$WORK/runtime/src"
printf '[package]\nname = "fetch-appimage-runtime"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nappimage = "=0.4.0"\n[workspace]\n' >"$WORK/runtime/Cargo.toml"
: >"$WORK/runtime/src/lib.rs"
cargo fetch --quiet --manifest-path "$WORK/runtime/Cargo.toml"
CRATE=$(cargo metadata --format-version 1 --manifest-path "$WORK/runtime/Cargo.toml" \
    | python3 -c 'import json,sys; print([p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "appimage"][0])')
RUNTIME="$(dirname "$CRATE")/assets/runtime-x86_64"
echo "$RUNTIME_SHA  $RUNTIME" | sha256sum -c --quiet - || die "the AppImage runtime of the appimage crate is not the one checked"

# The AppDir: the binary, the desktop entry (the .deb's template, rendered as the
# bundler renders it) and the icon at its root, as the AppImage format wants them.
APPDIR="$WORK/Sandalyst.AppDir"
BIN=sandalyst-desktop
mkdir -p "$APPDIR/usr/bin" "$APPDIR/usr/share/applications" "$APPDIR/usr/share/icons/hicolor/128x128/apps"
cp "$TARGET/$PROFILE/$BIN" "$APPDIR/usr/bin/$BIN"
python3 - src-tauri/tauri.conf.json src-tauri/linux/sandalyst.desktop "$BIN" >"$APPDIR/$BIN.desktop" <<'PY'
import json, re, sys
conf, template, binary = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3]
b = conf["bundle"]
# Tauri's bundler writes category Productivity as Office.
values = {"categories": {"Productivity": "Office;"}[b["category"]], "comment": b["shortDescription"],
          "exec": binary, "icon": binary, "name": conf["productName"],
          "mime_type": ";".join(a["mimeType"] for a in b["fileAssociations"])}
text = re.sub(r"\{\{#if (\w+)\}\}\n(.*?)\{\{/if\}\}\n", lambda m: m.group(2) if values.get(m.group(1)) else "", template, flags=re.S)
sys.stdout.write(re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], text))
PY
desktop-file-validate "$APPDIR/$BIN.desktop" || die "the AppImage's desktop entry is not valid"
cp "$APPDIR/$BIN.desktop" "$APPDIR/usr/share/applications/Sandalyst.desktop"
cp icons/128x128.png "$APPDIR/usr/share/icons/hicolor/128x128/apps/$BIN.png"
cp icons/128x128.png "$APPDIR/$BIN.png"
ln -s "$BIN.png" "$APPDIR/.DirIcon"
cat >"$APPDIR/AppRun" <<EOF
#!/bin/sh
# The AppImage's entry point: the app inside it, with the arguments it was given.
HERE=\${APPDIR:-\$(dirname "\$(readlink -f "\$0")")}
exec "\$HERE/usr/bin/$BIN" "\$@"
EOF
chmod +x "$APPDIR/AppRun"
mksquashfs "$APPDIR" "$WORK/app.squashfs" -root-owned -noappend -quiet -comp gzip >/dev/null
VERSION=$(python3 -c 'import json; print(json.load(open("src-tauri/tauri.conf.json"))["version"])')
mkdir -p "$BUNDLE/appimage"
APPIMAGE="$BUNDLE/appimage/Sandalyst_${VERSION}_amd64.AppImage"
cat "$RUNTIME" "$WORK/app.squashfs" >"$APPIMAGE"
chmod +x "$APPIMAGE"
say "built $APPIMAGE ($(du -h "$APPIMAGE" | cut -f1))"

# ---- the command line's man pages and shell completions, made by the binary itself ----
say "building the command line ($PROFILE) for its man pages and completions"
if [ $PROFILE = release ]; then
    cargo build --quiet --release -p sandalyst --bin sandalyst
else
    cargo build --quiet -p sandalyst --bin sandalyst
fi
CLI_DOCS="$BUNDLE/cli"
rm -rf "$CLI_DOCS"
mkdir -p "$CLI_DOCS/completions"
"$TARGET/$PROFILE/sandalyst" man --dir "$CLI_DOCS/man1" >/dev/null
for sh in bash zsh fish; do
    "$TARGET/$PROFILE/sandalyst" completions "$sh" >"$CLI_DOCS/completions/sandalyst.$sh"
done
say "wrote $(ls "$CLI_DOCS/man1" | wc -l) man pages and 3 completion scripts under $CLI_DOCS"

# ---- check them: desktop entry, MIME types, each started under Xvfb ----
# shellcheck disable=SC2086
scripts/check-package.sh --shots "$BUNDLE/check" ${DEB:-} "$APPIMAGE"
[ $INSTALL -eq 1 ] || exit 0

# ---- the .deb installed, for the launch time and memory of BENCHMARKS.md ----
DISP=:$((90 + $$ % 9))
Xvfb "$DISP" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
XVFB=$!
sleep 1

# start NAME PROGRAM [ARGS]: run it on the display with a fresh data folder until it
# draws its first content; leaves it running as $APP, its log in $LOG.
start() {
    name=$1
    shift
    DATA=$(mktemp -d -p "$WORK")
    LOG="$WORK/$name.log"
    DISPLAY=$DISP NO_AT_BRIDGE=1 SANDALYST_TIMING=1 SANDALYST_DATA_DIR=$DATA "$@" >"$LOG" 2>&1 &
    APP=$!
    i=0
    until grep -q "first content after" "$LOG"; do
        i=$((i + 1))
        kill -0 $APP 2>/dev/null || { cat "$LOG" >&2; die "the $name exited"; }
        [ $i -le 150 ] || { cat "$LOG" >&2; die "the $name drew nothing in 30 s"; }
        sleep 0.2
    done
    say "$name: $(grep -o 'first content after [0-9]* ms' "$LOG")"
}

DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$(realpath "$DEB")" >/dev/null
PKG=$(dpkg-deb --field "$DEB" Package)
INSTALLED=$(dpkg -L "$PKG" | grep '/bin/sandalyst-desktop$') || die "the package $PKG has no bin/sandalyst-desktop"
say "installed $INSTALLED"
start "installed app" "$INSTALLED"
sleep 20
total=0
for p in $APP $(pgrep -P $APP) $(for c in $(pgrep -P $APP); do pgrep -P "$c"; done); do
    kb=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null) || continue
    [ -n "$kb" ] || continue
    say "  $(cat "/proc/$p/comm"): $((kb / 1024)) MB PSS"
    total=$((total + kb))
done
say "idle memory, empty window, all processes: $((total / 1024)) MB PSS"
