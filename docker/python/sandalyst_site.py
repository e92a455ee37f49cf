"""Seed matplotlib's cache directory from the font list baked into the image.

The sandbox runs with a read-only root filesystem, so matplotlib needs a writable
MPLCONFIGDIR (the image sets it to /tmp/matplotlib, a tmpfs). Matplotlib refuses a
directory it cannot write (it warns and makes a temporary one) and a fresh directory
makes it rebuild its font list on first import. So the image bakes the font list at
build time into BAKED, and this module, loaded at interpreter start-up by
sandalyst.pth, copies it into MPLCONFIGDIR once per container. It costs one stat when
the copy is already there and never raises.
"""

import os

BAKED = "/usr/local/share/sandalyst/mplcache"


def _seed():
    dst = os.environ.get("MPLCONFIGDIR")
    if not dst or os.path.abspath(dst) == BAKED:
        return
    try:
        names = os.listdir(BAKED)
        todo = [n for n in names if not os.path.exists(os.path.join(dst, n))]
        if not todo:
            return
        os.makedirs(dst, mode=0o700, exist_ok=True)
        for name in todo:
            target = os.path.join(dst, name)
            partial = "%s.%d.partial" % (target, os.getpid())
            with open(os.path.join(BAKED, name), "rb") as src, open(partial, "wb") as out:
                out.write(src.read())
            os.replace(partial, target)
    except OSError:
        pass


_seed()
del _seed
