#!/bin/sh
# mmdebstrap --customize-hook for docker/offline/build-rootfs.sh: trims the Debian
# root filesystem at $1, installs the pyarrow wheel $2 (already checked against its
# pinned sha256), adds the analyst user, bakes the matplotlib font list and checks the
# result, including that the installed versions are the PINS in $3 ("name==version"
# separated by spaces). Any failure fails the build.
set -eu
ROOT=$1
WHEEL=$2
PINS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
in_root() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
say() { echo "rootfs: $*"; }

# 1. Drop the compiler toolchain. Debian's python3-scipy depends on python3-pythran
#    (a compiler for scipy's own build), which drags in gcc, g++, binutils and -dev
#    packages (~550 MB). Replace python3-pythran by an empty stub of a higher version,
#    so apt's view stays consistent (later `apt-get install` in a derived image works),
#    then let apt remove everything no longer needed.
if ver=$(in_root dpkg-query -W -f '${Version}' python3-pythran 2>/dev/null) && [ -n "$ver" ] \
   && ! in_root dpkg-query -W -f '${Version}' python3-pythran | grep -q sandalyst; then
    say "replacing python3-pythran $ver by an empty stub"
    stub="$ROOT/tmp/pythran-stub"
    rm -rf "$stub"; mkdir -p "$stub/DEBIAN"
    cat > "$stub/DEBIAN/control" <<CONTROL
Package: python3-pythran
Version: ${ver}+sandalyst1
Architecture: all
Maintainer: Sandalyst <sandalyst@localhost>
Section: python
Priority: optional
Description: empty stand-in for pythran in the Sandalyst sandbox image
 scipy needs pythran only to build itself; the sandbox image has no compiler.
CONTROL
    in_root dpkg-deb --root-owner-group --build /tmp/pythran-stub /tmp/pythran-stub.deb >/dev/null
    in_root dpkg -i /tmp/pythran-stub.deb
    rm -rf "$stub" "$ROOT/tmp/pythran-stub.deb"
fi
# usrmerge (and the perl it needs, ~55 MB) only converts a system to merged /usr, done
# by now: usr-is-merged (included) satisfies what depends on it.
if in_root dpkg-query -W -f '${Status}' usr-is-merged 2>/dev/null | grep -q 'ok installed' \
   && in_root dpkg-query -W -f '${Status}' usrmerge 2>/dev/null | grep -q 'ok installed'; then
    say "removing usrmerge and perl"
    in_root apt-mark auto perl libperl5.36 perl-modules-5.36 libfile-find-rule-perl \
        libnumber-compare-perl libtext-glob-perl libgdbm-compat4 >/dev/null 2>&1 || true
    in_root apt-get -y -q purge usrmerge
fi
say "removing packages nothing needs any more"
in_root apt-get -y -q -o APT::AutoRemove::RecommendsImportant=false \
    -o APT::AutoRemove::SuggestsImportant=false --purge autoremove
# Belt and braces: if a toolchain package survived autoremove, purge it by force.
left=$(in_root dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 2>/dev/null \
    | awk '$1 ~ /^.i/ {print $2}' \
    | grep -E '^(gcc-[0-9]+|g\+\+-[0-9]+|cpp-[0-9]+|gcc|g\+\+|cpp|binutils|binutils-.*|libbinutils|libgcc-[0-9]+-dev|libstdc\+\+-[0-9]+-dev|libc6-dev|libpython3.*-dev|python3(\.[0-9]+)?-dev|libboost.*-dev|libxsimd-dev|libopenblas.*-dev|libblas-dev|liblapack-dev|python3-beniget|python3-gast|python3-ply)(:.*)?$' || true)
if [ -n "$left" ]; then
    say "purging leftover toolchain packages: $(echo $left)"
    # shellcheck disable=SC2086
    in_root dpkg --purge --force-depends $left
fi

# pyarrow from its wheel: a wheel is a zip laid out as site-packages, so unpacking it
# where Debian's python3 looks for locally installed packages is the whole install
# (pip, in the image for `allow:` sessions, is not needed for it). Its C++ headers and Cython sources only serve building against it.
local_site=$(in_root python3 -c 'import site; print(site.getsitepackages()[0])')
case $local_site in /usr/local/lib/python3*/dist-packages) ;;
    *) echo "rootfs: unexpected site-packages folder for pyarrow: $local_site" >&2; exit 1 ;; esac
say "installing $(basename "$WHEEL") into $local_site"
mkdir -p "$ROOT$local_site"
cp "$WHEEL" "$ROOT/tmp/pyarrow.whl"
in_root python3 -m zipfile -e /tmp/pyarrow.whl "$local_site"
rm -f "$ROOT/tmp/pyarrow.whl"
echo sandalyst > "$(echo "$ROOT$local_site"/pyarrow-*.dist-info)/INSTALLER"
rm -rf "$ROOT$local_site/pyarrow/include" "$ROOT$local_site/pyarrow/src"
find "$ROOT$local_site/pyarrow" \( -name '*.pyx' -o -name '*.pxd' -o -name '*.pxi' -o -name '*.h' \
    -o -name '*.cc' -o -name '*.cpp' -o -name 'CMakeLists.txt' \) -delete
chmod -R a+rX "$ROOT$local_site"

# The libraries' own test suites (~140 MB) are never imported by an analysis. They are
# deleted after installation: excluding them from dpkg makes py3compile fail. One
# exception: numpy 2's numpy.testing (imported by `from numpy import *`) imports
# numpy._core.tests._natype, so that module and its package stay.
natype=$ROOT/usr/lib/python3/dist-packages/numpy/_core/tests
find "$ROOT/usr/lib/python3/dist-packages" "$ROOT$local_site" -depth -type d -name tests \
    ! -path "$natype" -exec rm -rf {} +
if [ -d "$natype" ]; then
    find "$natype" -mindepth 1 ! -name __init__.py ! -name _natype.py ! -path "$natype/__pycache__" \
        ! -path "$natype/__pycache__/__init__.*" ! -path "$natype/__pycache__/_natype.*" -exec rm -rf {} +
fi
# The image runs with PYTHONDONTWRITEBYTECODE on a read-only root: compile pyarrow now
# (dpkg's py3compile already did the Debian packages).
in_root python3 -m compileall -q -j 0 "$local_site" >/dev/null

# 2. The unprivileged user the sandbox runs as, and its workspace.
if ! in_root getent passwd 1000 >/dev/null; then
    in_root groupadd --gid 1000 analyst
    in_root useradd --uid 1000 --gid 1000 --home-dir /tmp --no-create-home --shell /bin/sh analyst
fi
mkdir -p "$ROOT/workspace"
in_root chown 1000:1000 /workspace
in_root chmod 0755 /workspace

# 3. Matplotlib: bake the font list, and the start-up hook that seeds MPLCONFIGDIR from it.
site=/usr/lib/python3/dist-packages
cp "$HERE/../python/sandalyst_site.py" "$HERE/../python/sandalyst.pth" "$ROOT$site/"
chmod 0644 "$ROOT$site/sandalyst_site.py" "$ROOT$site/sandalyst.pth"
in_root python3 -m py_compile "$site/sandalyst_site.py"
mkdir -p "$ROOT/usr/local/share/sandalyst/mplcache"
install -m 0644 "$HERE/../python/matplotlibrc" "$ROOT/usr/local/share/sandalyst/mplcache/matplotlibrc"
in_root env MPLCONFIGDIR=/usr/local/share/sandalyst/mplcache MPLBACKEND=Agg \
    python3 -c 'import matplotlib.pyplot'
chmod -R a+rX "$ROOT/usr/local/share/sandalyst"
ls "$ROOT/usr/local/share/sandalyst/mplcache" | grep -q '^fontlist-.*\.json$' \
    || { echo "rootfs: SELF-CHECK FAILED: matplotlib wrote no font list" >&2; exit 1; }

# Logs and backups of the build itself.
rm -rf "$ROOT"/var/log/apt/* "$ROOT"/var/log/dpkg.log "$ROOT"/var/log/alternatives.log \
    "$ROOT"/var/cache/debconf/*-old "$ROOT"/var/lib/dpkg/*-old

# 4. Self-check.
say "self-check: apt dependency state"
in_root apt-get check -q
say "self-check: shared libraries"
missing=$(in_root sh -c 'find / -xdev -type f \( -name "*.so" -o -name "*.so.*" \) -print0 \
    | xargs -0 -r ldd 2>/dev/null \
    | awk "/^[^ \t].*:\$/ {f=\$0} /not found/ {print f \" \" \$1}"' | sort -u)
if [ -n "$missing" ]; then
    echo "rootfs: SELF-CHECK FAILED: shared libraries with missing dependencies:" >&2
    echo "$missing" >&2
    exit 1
fi
say "self-check: python imports and a plot, as uid 1000 with a fresh MPLCONFIGDIR"
rm -rf "$ROOT/tmp/sandalyst-check"; mkdir -p "$ROOT/tmp/sandalyst-check"
chmod 0777 "$ROOT/tmp/sandalyst-check"
check='
import logging, os, sys
seen = []
class Keep(logging.Handler):
    def emit(self, record):
        seen.append(record.getMessage())
log = logging.getLogger("matplotlib")
log.addHandler(Keep()); log.setLevel(logging.DEBUG); log.propagate = False
import numpy, scipy, scipy.stats, scipy.optimize, pandas, matplotlib, matplotlib.pyplot as plt
# Everything an analysis commonly reaches for must import (test folders are deleted).
import importlib
missing = []
for m in ("numpy.linalg numpy.fft numpy.random numpy.polynomial numpy.ma scipy.cluster "
          "scipy.constants scipy.fft scipy.integrate scipy.interpolate scipy.io scipy.linalg "
          "scipy.ndimage scipy.odr scipy.signal scipy.sparse scipy.sparse.linalg "
          "scipy.sparse.csgraph scipy.spatial scipy.special scipy.stats.mstats "
          "pandas.plotting pandas.api.types pandas.tseries.offsets pandas.io.formats.format "
          "matplotlib.dates matplotlib.ticker matplotlib.colors matplotlib.patches "
          "matplotlib.gridspec mpl_toolkits.mplot3d seaborn statsmodels.api "
          "statsmodels.formula.api statsmodels.tsa.api sklearn sklearn.linear_model "
          "sklearn.ensemble sklearn.cluster sklearn.preprocessing sklearn.model_selection "
          "sklearn.metrics sklearn.decomposition sklearn.impute openpyxl xlrd odf.opendocument "
          "tabulate plotly plotly.express plotly.io pyarrow pyarrow.parquet pyarrow.feather pyarrow.csv pyarrow.compute "
          "csv json sqlite3 zoneinfo ssl IPython IPython.core.interactiveshell "
          "matplotlib_inline.backend_inline").split():
    try:
        importlib.import_module(m)
    except Exception as e:
        missing.append("%s (%s)" % (m, e))
assert not missing, "cannot import: " + "; ".join(missing)
import seaborn, pyarrow
pandas.DataFrame({"t": pandas.date_range("2024-01-01", periods=48, freq="h"),
                  "v": numpy.arange(48.0)}).set_index("t").resample("D").mean()
scipy.optimize.curve_fit(lambda x, a, b: a * x + b, numpy.arange(10.0), numpy.arange(10.0) * 2 + 1)
scipy.stats.median_abs_deviation(numpy.arange(10.0))
# The file formats an analyst drops: Excel (both), OpenDocument, Parquet, Feather.
d = "/tmp/sandalyst-check"
df = pandas.DataFrame({"city": ["Oslo", "北京"], "kwh": [1.5, 2.25], "n": [1, 2]})
df.to_excel(d + "/x.xlsx", index=False); df.to_excel(d + "/x.ods", index=False)
df.to_parquet(d + "/x.parquet"); df.to_feather(d + "/x.feather")
for name in ("x.xlsx", "x.ods", "x.parquet", "x.feather"):
    back = pandas.read_parquet(d + "/" + name) if name.endswith("parquet") else \
        pandas.read_feather(d + "/" + name) if name.endswith("feather") else pandas.read_excel(d + "/" + name)
    assert back.equals(df), (name, back)
assert "北京" in df.to_markdown()
# An interactive chart as the desktop shows it: plotly.js inlined (Debian ships it in
# /usr/share/python3-plotly), no script or style from any URL.
import plotly.express as px, re
px.bar(df, x="city", y="kwh").write_html(d + "/x.html", include_plotlyjs=True)
page = open(d + "/x.html", encoding="utf-8").read()
assert len(page) > 1_000_000 and "plotly.js v" in page, "plotly.js is not inlined"
assert not re.search(r"<script[^>]+src=|<link[^>]+href=", page), "the chart loads from a URL"
import importlib.metadata
wrong = ["%s is %s, not %s" % (n, importlib.metadata.version(n), v)
         for n, v in (p.split("==") for p in sys.argv[1].split())
         if importlib.metadata.version(n).split("+")[0] != v]  # Debian adds +dfsg
assert not wrong, "the installed versions are not the PINS of build-rootfs.sh: " + "; ".join(wrong)
assert any(m.startswith("Using fontManager instance") for m in seen), "font list was rebuilt"
from matplotlib import font_manager
names = {f.name for f in font_manager.fontManager.ttflist}
assert {"DejaVu Sans", "WenQuanYi Micro Hei"} <= names, names
# A chart with a CJK label: a missing glyph would warn on stderr, which fails the check.
ax = seaborn.barplot(data=df, x="city", y="kwh")
ax.set_title("能耗 energy use (kWh)")
plt.savefig(d + "/x.png")
assert os.path.getsize(d + "/x.png") > 1000
print("uid", os.getuid(), "python", sys.version.split()[0], "numpy", numpy.__version__, "scipy", scipy.__version__,
      "pandas", pandas.__version__, "matplotlib", matplotlib.__version__, "seaborn", seaborn.__version__,
      "pyarrow", pyarrow.__version__)
'
# joblib (scikit-learn) needs POSIX semaphores, i.e. a writable /dev/shm, or it warns
# on import; a container has one, the build chroot's is root's: open it for the check.
shm_mode=$(stat -c %a "$ROOT/dev/shm")
chmod 1777 "$ROOT/dev/shm"
# Run as uid 1000 when the namespace maps it, as root otherwise.
as_user=--userspec=1000:1000
chroot $as_user "$ROOT" true 2>/dev/null || as_user=
err=$(chroot $as_user "$ROOT" env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 MPLBACKEND=Agg \
    PYTHONDONTWRITEBYTECODE=1 MPLCONFIGDIR=/tmp/sandalyst-check/mpl python3 -c "$check" "$PINS" 2>&1 >/dev/null) \
    || { echo "rootfs: SELF-CHECK FAILED: python check: $err" >&2; exit 1; }
[ -z "$err" ] || { echo "rootfs: SELF-CHECK FAILED: python wrote to stderr: $err" >&2; exit 1; }
chroot $as_user "$ROOT" env -i PATH=/usr/bin:/bin HOME=/tmp MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=1 \
    MPLCONFIGDIR=/tmp/sandalyst-check/mpl2 python3 -c "$check" "$PINS" | sed 's/^/rootfs: /'
# What is in the image, for the build log.
in_root python3 -c 'import importlib.metadata as m; print(" ".join(sorted("%s==%s" % (d.metadata["Name"], d.version) for d in m.distributions())))' \
    | sed 's/^/rootfs: packages: /'
rm -rf "$ROOT/tmp/sandalyst-check"
chmod "$shm_mode" "$ROOT/dev/shm"
say "self-check passed"
