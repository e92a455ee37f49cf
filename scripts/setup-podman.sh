#!/bin/sh
# Make Podman ready for Sandalyst's Podman tests, idempotently (a second run does
# nothing that is already done):
#   - install Podman 4 from Debian (podman, uidmap for rootless, slirp4netns);
#   - copy the sandbox image IMAGE from Docker into Podman's rootful store (and, with
#     --rootless USER, into that user's store), tagged as clients ask for it;
#   - with --rootless USER: create the unprivileged USER (with /etc/subuid ranges).
# It does not start a Podman service: each test starts and stops its own.
#
# Usage: scripts/setup-podman.sh [--rootless USER] IMAGE
#   IMAGE is the tag `sandalyst image status` names (e.g. sandalyst-sandbox:1550044e1517).
# Exit status non-zero, with the reason on stderr, when anything cannot be done.
set -eu

rootless_user=""
if [ "${1:-}" = "--rootless" ]; then
    rootless_user="${2:?--rootless needs a user name}"
    shift 2
fi
image="${1:?usage: setup-podman.sh [--rootless USER] IMAGE}"

say() { echo "setup-podman: $*" >&2; }

if ! command -v podman >/dev/null 2>&1 || ! command -v newuidmap >/dev/null 2>&1 \
    || ! command -v slirp4netns >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        say "podman, uidmap and slirp4netns are missing and this is not root: install them with apt-get install podman uidmap slirp4netns"
        exit 1
    fi
    say "installing podman, uidmap, slirp4netns (Debian packages)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends podman uidmap slirp4netns >/dev/null 2>&1 || {
        apt-get update >/dev/null 2>&1 || true
        apt-get install -y --no-install-recommends podman uidmap slirp4netns >&2 || {
            say "cannot install podman from the Debian packages (see above)"
            exit 1
        }
    }
fi

# Where a tar of the image is kept between the rootful and rootless loads.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
tarball=""
save_image() {
    if [ -z "$tarball" ]; then
        if ! docker image inspect "$image" >/dev/null 2>&1; then
            say "image $image is not in Docker: build it first (cargo run -p sandalyst --bin sandalyst -- image build --offline)"
            exit 1
        fi
        say "saving $image from Docker"
        docker save "$image" -o "$tmp/image.tar"
        chmod 644 "$tmp/image.tar"
        tarball="$tmp/image.tar"
    fi
}

# Earlier builds of the same image (another tag of the same name) are removed after a
# new one is loaded, so the stores do not grow with every recipe change.
prune_older() {
    name="${image%:*}"
    "$@" podman images --format '{{.Repository}}:{{.Tag}}' 2>/dev/null \
        | grep -E "(^|/)${name##*/}:" | grep -v ":${image##*:}\$" \
        | while read -r old; do "$@" podman rmi -f "$old" >/dev/null 2>&1 || true; done
}

# A `docker save` archive loads as localhost/NAME:TAG; the API finds NAME:TAG only
# under docker.io/library/NAME:TAG.
full="docker.io/library/$image"
case "$image" in */*) full="$image" ;; esac

if ! podman image exists "$full"; then
    save_image
    say "loading $image into rootful Podman"
    podman load -q -i "$tarball" >&2
    podman tag "localhost/$image" "$full" 2>/dev/null || podman tag "$image" "$full"
    prune_older
fi

if [ -n "$rootless_user" ]; then
    if ! id "$rootless_user" >/dev/null 2>&1; then
        say "creating the unprivileged user $rootless_user"
        useradd -m -s /bin/sh "$rootless_user"
    fi
    if ! grep -q "^$rootless_user:" /etc/subuid || ! grep -q "^$rootless_user:" /etc/subgid; then
        say "giving $rootless_user subordinate uid/gid ranges"
        usermod --add-subuids 200000-265535 --add-subgids 200000-265535 "$rootless_user"
    fi
    home=$(getent passwd "$rootless_user" | cut -d: -f6)
    as_user() { runuser -u "$rootless_user" -- env HOME="$home" "$@"; }
    # Podman 4.3 defaults rootless storage to vfs, which copies the whole image at
    # every container start (about 5 s here); the kernel's own overlay in a user
    # namespace (Linux 5.13 and later) starts one in about 0.5 s.
    conf="$home/.config/containers/storage.conf"
    if [ ! -f "$conf" ]; then
        say "rootless storage for $rootless_user: overlay"
        mkdir -p "$(dirname "$conf")"
        printf '[storage]\ndriver = "overlay"\n' >"$conf"
        chown -R "$rootless_user": "$home/.config"
        (cd / && as_user podman system reset -f) >/dev/null 2>&1 || true
    fi
    if ! (cd / && as_user podman image exists "$full"); then
        save_image
        say "loading $image into $rootless_user's rootless Podman"
        (cd / && as_user podman load -q -i "$tarball") >&2
        (cd / && as_user podman tag "localhost/$image" "$full") >&2
        (cd / && prune_older as_user)
    fi
fi
say "ready: podman $(podman version --format '{{.Client.Version}}'), image $full"
