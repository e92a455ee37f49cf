# Sandalyst's persistent Python kernel. Runs inside the sandbox container, started
# by the host with `python3 -u -c <this source>` over one exec's stdin/stdout.
# Cells run through IPython's own InteractiveShell, so display(), rich reprs, `!cmd`
# lines and magics (%timeit, %%bash, ...) behave as in Jupyter.
#
# Protocol: one JSON object per line.
#   host -> kernel (stdin):  {"type": "execute", "id": N, "code": "..."}
#                            {"type": "interrupt"}
#                            {"type": "killpg", "id": N, "pgid": G}
#                            {"type": "list_outputs", "id": N}
#   kernel -> host (stdout): {"type": "ready", "pid": P}
#                            {"type": "stream", "id": N, "name": "stdout|stderr",
#                             "text": "..."}   (while cell N runs, every 100 ms)
#                            {"type": "result", "id": N, "status": "ok|error|interrupted",
#                             "stdout": "...", "stderr": "...", "traceback": "...",
#                             "stdout_bytes": B, "stderr_bytes": B,
#                             "figures": ["<base64 PNG>", ...],
#                             "names": "df (DataFrame 8760x4), ..."}
#                            {"type": "outputs", "id": N, "entries": [[path, bytes,
#                             mtime_ns], ...], "truncated": bool}
#                            {"type": "killed", "id": N}   (the group is gone or given up)
# The protocol owns a dup of the original fd 1. Fds 1 and 2 are then pipes read by
# this process, so what C code and subprocesses write lands in the running cell's
# stdout/stderr; outside any cell it goes to the original fd 2, which the host keeps
# as "stray" output. stdin is /dev/null for the cell and its children.
import base64
import codecs
import io
import json
import os
import queue
import re
import signal
import stat
import subprocess
import sys
import threading
import time
import warnings

CAP = int(os.environ.get("SANDALYST_OUTPUT_CAP", "32768"))
OUTPUT_DIR = os.environ.get("SANDALYST_OUTPUT_DIR", "/workspace/output")
MAX_FIGURES = 20
MAX_FIGURE_BYTES = 16 << 20
MAX_LISTED = 10000
FLUSH_EVERY = 0.1
PREWARM = ("numpy", "pandas", "matplotlib.pyplot")

_proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8", errors="replace")
_raw_err = os.dup(2)
_requests_in = os.fdopen(os.dup(0), "r", encoding="utf-8", errors="replace")
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
sys.stdin = open(os.devnull, "r")

_lock = threading.RLock()  # the running cell and its buffers
_send_lock = threading.Lock()  # one protocol line at a time
_cell = None  # the running _Cell, if any
_in_cell = False  # the main thread is inside user code: SIGINT may interrupt it
_busy = threading.Event()
# An interrupt that came for a cell not yet started (sent right after the execute
# request) is kept here, by cell id, and lands as soon as that cell starts.
_received_id = None
_pending_interrupt = None
_requests = queue.Queue()


def _send(obj):
    line = json.dumps(obj) + "\n"
    with _send_lock:
        _proto.write(line)
        _proto.flush()


def _write_raw(text):
    data = text.encode("utf-8", "replace")
    while data:
        try:
            n = os.write(_raw_err, data)
        except OSError:
            return
        data = data[n:]


class Capture:
    """Keeps the head and the tail of what is written, up to CAP characters."""

    def __init__(self):
        self.head = []
        self.head_len = 0
        self.tail = []
        self.tail_len = 0
        self.total = 0

    def write(self, s):
        self.total += len(s)
        room = CAP // 2 - self.head_len
        if room > 0:
            self.head.append(s[:room])
            self.head_len += min(len(s), room)
            s = s[room:]
        if s:
            self.tail.append(s[-(CAP // 2):])
            self.tail_len += len(self.tail[-1])
            while self.tail_len > CAP // 2 and len(self.tail) > 1:
                self.tail_len -= len(self.tail.pop(0))

    def text(self):
        head = "".join(self.head)
        tail = "".join(self.tail)
        kept = len(head) + len(tail)
        if self.total > kept:
            tail = tail[-(CAP // 2):]
            return (
                head
                + "\n[... output truncated: %d characters omitted of %d ...]\n"
                % (self.total - len(head) - len(tail), self.total)
                + tail
            )
        return head + tail


class _Stream:
    """One stream of a running cell: the capped whole, and what is yet to be streamed
    (the first CAP characters, then one truncation marker)."""

    def __init__(self, cell, name):
        self.cell = cell
        self.name = name
        self.capture = Capture()
        self.pending = []
        self.streamed = 0
        self.cut = False

    def add(self, s):
        self.capture.write(s)
        if self.cut:
            return
        room = CAP - self.streamed
        if len(s) > room:
            s = s[:room]
            self.cut = True
        self.streamed += len(s)
        if s:
            self.pending.append(s)
        if self.cut:
            self.pending.append("\n[... output truncated ...]\n")

    def flush(self):
        if self.pending:
            text = "".join(self.pending)
            self.pending = []
            _send({"type": "stream", "id": self.cell.id, "name": self.name, "text": text})


class _Cell:
    def __init__(self, cid):
        self.id = cid
        self.out = _Stream(self, "stdout")
        self.err = _Stream(self, "stderr")
        self.figures = []
        self.figure_bytes = 0
        self.figures_dropped = 0
        self.traceback = []

    def flush(self):
        self.out.flush()
        self.err.flush()


def _route(which, text):
    """Text written to fd/stream 1 or 2: to the running cell, else to the host as stray."""
    if not text:
        return
    with _lock:
        cell = _cell
        if cell is not None:
            (cell.out if which == 1 else cell.err).add(text)
            return
    _write_raw(text)


class _Binary(io.RawIOBase):
    def __init__(self, which):
        self.which = which
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def writable(self):
        return True

    def write(self, b):
        _route(self.which, self.decoder.decode(bytes(b)))
        return len(b)


class _Writer(io.TextIOBase):
    """sys.stdout / sys.stderr: straight into the running cell's capture."""

    def __init__(self, which):
        self.which = which
        self.buffer = _Binary(which)

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "replace"

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            s = str(s)
        _route(self.which, s)
        return len(s)

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        return self.which


_SYNC = b"\x00\x1bsandalyst-sync\x1b\x00"


class _Pump(threading.Thread):
    """Reads what is written to fd 1 or 2 (C code, subprocesses) and routes it."""

    def __init__(self, which):
        super().__init__(daemon=True)
        r, w = os.pipe()
        os.dup2(w, which)
        os.close(w)
        self.fd = r
        self.which = which
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.synced = threading.Event()

    def run(self):
        carry = b""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            data = carry + data
            carry = b""
            while True:
                i = data.find(_SYNC)
                if i < 0:
                    break
                _route(self.which, self.decoder.decode(data[:i]))
                data = data[i + len(_SYNC):]
                self.synced.set()
            # Keep a possible start of the marker for the next read.
            for k in range(min(len(_SYNC) - 1, len(data)), 0, -1):
                if _SYNC.startswith(data[-k:]):
                    carry = data[-k:]
                    data = data[:-k]
                    break
            _route(self.which, self.decoder.decode(data))

    def sync(self, timeout):
        """Wait until everything written to the fd so far has been routed."""
        self.synced.clear()
        try:
            os.write(self.which, _SYNC)
        except OSError:
            return False
        return self.synced.wait(timeout)


_pumps = []


def _sync_pipes(timeout=1.0):
    for p in _pumps:
        p.sync(timeout)


def _flusher():
    while True:
        _busy.wait()
        time.sleep(FLUSH_EVERY)
        with _lock:
            if _cell is not None:
                _cell.flush()


# --- figures and rich output -------------------------------------------------------

def _add_figure(png):
    if isinstance(png, str):
        try:
            png = base64.b64decode(png)
        except ValueError:
            return
    with _lock:
        cell = _cell
        if cell is None or png in cell.figures:
            return  # e.g. a figure that is the cell's value and still open at its end
        if len(cell.figures) >= MAX_FIGURES or cell.figure_bytes + len(png) > MAX_FIGURE_BYTES:
            cell.figures_dropped += 1
            return
        cell.figures.append(png)
        cell.figure_bytes += len(png)


def _show(data):
    """A display() or a cell's value: images become figures, the rest text."""
    if not isinstance(data, dict):
        return
    # What subprocesses wrote before this display comes first (as far as it is known).
    _sync_pipes(0.2)
    png = data.get("image/png")
    if png is not None:
        _add_figure(png)
        return
    text = data.get("text/markdown")
    if not isinstance(text, str):
        text = data.get("text/plain")
        html = data.get("text/html")
        if isinstance(html, str) and (
            not isinstance(text, str) or text.startswith("<IPython.core.display.")
        ):
            text = html
    if isinstance(text, str):
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _close_figures():
    """Figures still open at the end of a cell become its outputs, then are closed."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        from matplotlib._pylab_helpers import Gcf

        for manager in Gcf.get_all_fig_managers():
            buf = io.BytesIO()
            manager.canvas.figure.savefig(buf, format="png", bbox_inches="tight")
            _add_figure(buf.getvalue())
        plt.close("all")
    except Exception as e:  # a broken figure must not break the kernel
        _route(2, "could not render an open figure: %s\n" % e)
        try:
            plt.close("all")
        except Exception:
            pass


class _InlineBackend:
    """A meta path finder that finds nothing: when pyplot is first imported, it points
    matplotlib at the inline backend (plt.show() displays), for this process only."""

    done = False

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name == "matplotlib.pyplot" and not cls.done:
            cls.done = True
            mpl = sys.modules.get("matplotlib")
            if mpl is not None:
                try:
                    mpl.rcParams["backend"] = "module://matplotlib_inline.backend_inline"
                except Exception:
                    pass
        return None


# --- background processes ----------------------------------------------------------

def _children():
    """Live descendants of this process (it is a child subreaper, so orphans of its
    children are reparented to it and stay its descendants)."""
    me = os.getpid()
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] == b"Z":
            continue
        kids.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [me]
    while todo:
        for c in kids.get(todo.pop(), ()):
            found.append(c)
            todo.append(c)
    return found


def _reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _end_children():
    """Kill whatever the cell started and left running (`!cmd &`, Popen, ...)."""
    for _ in range(50):
        pids = _children()
        if not pids:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        _reap()
        time.sleep(0.002)
    _reap()


def _killpg(pgid):
    try:
        pgid = int(pgid)
    except (TypeError, ValueError):
        return
    if pgid <= 1 or pgid == os.getpgid(0):
        return
    # Until the group is empty: a fork bomb's children born while the signal goes
    # round escape one killpg (seen under gVisor, whose killpg is not atomic). Dead
    # members are reaped here (this process is the subreaper), else they keep the
    # group alive.
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            return
        time.sleep(0.02)
        _reap()


def _subreaper():
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass


# --- outputs -----------------------------------------------------------------------

def _list_outputs(rid):
    entries, truncated = [], False
    todo = [("", OUTPUT_DIR)]
    while todo and not truncated:
        rel, path = todo.pop()
        try:
            it = list(os.scandir(path))
        except OSError:
            continue
        for e in it:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            name = rel + e.name
            if stat.S_ISDIR(st.st_mode):
                todo.append((name + "/", e.path))
            elif stat.S_ISREG(st.st_mode):
                if len(entries) >= MAX_LISTED:
                    truncated = True
                    break
                entries.append([name, st.st_size, st.st_mtime_ns])
    _send({"type": "outputs", "id": rid, "entries": entries, "truncated": truncated})


# --- the request loop --------------------------------------------------------------

def _interrupt_main():
    # Aimed at the main thread: a signal sent to the process may be taken by another
    # thread (numpy's BLAS threads, say), and then a time.sleep() in the cell would
    # not wake up before it ends.
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def _reader():
    # Reads the host's requests; an interrupt is delivered at once as SIGINT so that
    # it lands even inside time.sleep or a blocking read.
    for line in _requests_in:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        kind = msg.get("type")
        global _received_id, _pending_interrupt
        if kind == "interrupt":
            if _busy.is_set():
                _interrupt_main()
            else:
                _pending_interrupt = _received_id
                if _busy.is_set():  # the cell started meanwhile (it may see both)
                    _interrupt_main()
        elif kind == "killpg":
            # Done here, not by a new process: a fork bomb may hold every free pid. The
            # reply lets the host end the call only once its group is gone, so the
            # killing never eats into the next cell's time.
            _killpg(msg.get("pgid"))
            if msg.get("id") is not None:
                _send({"type": "killed", "id": msg.get("id")})
        elif kind == "list_outputs":
            try:
                _list_outputs(msg.get("id"))
            except Exception as e:
                _send({"type": "outputs", "id": msg.get("id"), "error": str(e)})
        else:
            if kind == "execute":
                _received_id = msg.get("id")
            _requests.put(msg)
    _requests.put(None)


_interrupted = None  # the id of the cell a KeyboardInterrupt was raised in


def _on_sigint(signum, frame):
    # One KeyboardInterrupt per cell, and only inside it: a late or doubled interrupt
    # must never land in the kernel's own code.
    global _interrupted
    cell = _cell
    if _in_cell and cell is not None and _interrupted != cell.id:
        _interrupted = cell.id
        raise KeyboardInterrupt


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _make_shell():
    # Half of IPython's import time is its terminal front end (prompt_toolkit, via
    # IPython.embed) and jedi (completion): neither is used here, so both are kept
    # out while the shell is built, and importable normally afterwards.
    import types

    embed = types.ModuleType("IPython.terminal.embed")

    def _embed(*args, **kwargs):
        from IPython.terminal.embed import embed as real

        return real(*args, **kwargs)

    embed.embed = _embed
    stubs = {"jedi": None, "IPython.terminal.embed": embed}
    stubs = {k: v for k, v in stubs.items() if k not in sys.modules}
    sys.modules.update(stubs)
    try:
        from traitlets import Type
        from traitlets.config import Config
        from IPython.core.displayhook import DisplayHook
        from IPython.core.displaypub import DisplayPublisher
        from IPython.core.interactiveshell import InteractiveShell
    finally:
        for name, stub in stubs.items():
            if sys.modules.get(name, 0) is stub:
                del sys.modules[name]
        terminal = sys.modules.get("IPython.terminal")
        if terminal is not None and getattr(terminal, "embed", None) is embed:
            del terminal.embed

    class Publisher(DisplayPublisher):
        def publish(self, data, metadata=None, *args, **kwargs):
            _show(data)

        def clear_output(self, wait=False):
            pass

    class Hook(DisplayHook):
        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            _show(format_dict)

        def finish_displayhook(self):
            pass

    class Shell(InteractiveShell):
        displayhook_class = Type(Hook)
        display_pub_class = Type(Publisher)

        def _showtraceback(self, etype, evalue, stb):
            # Python 3.13 names an unfinished statement _IncompleteInputError (a
            # SyntaxError subclass): say SyntaxError, as 3.12 did and models expect.
            text = _ANSI.sub("", self.InteractiveTB.stb2text(stb))
            text = text.replace("_IncompleteInputError:", "SyntaxError:")
            with _lock:
                if _cell is not None:
                    _cell.traceback.append(text)

        def enable_gui(self, gui=None):
            pass

        def ask_exit(self):
            # exit() / quit() in a cell: this kernel lives as long as the sandbox.
            print("exit() is ignored: the kernel keeps running", file=sys.stderr)

        def system(self, cmd):
            # IPython's system_raw: the command inherits fds 1 and 2, which this
            # kernel reads, so its output streams like the cell's own.
            cmd = self.var_expand(cmd, depth=1)
            try:
                ec = subprocess.call(cmd, shell=True, executable=os.environ.get("SHELL") or None)
            except KeyboardInterrupt:
                print("\n" + self.get_exception_only(), file=sys.stderr)
                ec = 128 + int(signal.SIGINT)
            if ec > 128:
                ec = -(ec - 128)
            _sync_pipes()
            self.user_ns["_exit_code"] = ec

    cfg = Config()
    cfg.HistoryManager.enabled = False
    cfg.HistoryManager.hist_file = ":memory:"
    cfg.InteractiveShell.colors = "NoColor"
    cfg.InteractiveShell.xmode = "Plain"
    cfg.InteractiveShell.cache_size = 0
    cfg.InlineBackend.rc = {}
    shell = Shell.instance(config=cfg)
    # Said after a cell raised SystemExit; this kernel has no console to exit from.
    warnings.filterwarnings("ignore", message="To exit: use 'exit', 'quit', or Ctrl-D.")
    sys.meta_path.insert(0, _InlineBackend)
    return shell


class _PlainShell:
    """Cells as plain Python, for an image without IPython (e.g. a custom one): no
    display(), `!` or `%` lines, but the same protocol and guarantees."""

    class Result:
        error_before_exec = None
        error_in_exec = None

    def __init__(self):
        self.ns = {"__name__": "__main__", "__builtins__": __builtins__}

    def run_cell(self, code, store_history=True):
        import ast
        import traceback

        res = self.Result()
        try:
            tree = ast.parse(code, "<cell>", "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, "<cell>", "exec"), self.ns)
            if last is not None:
                value = eval(compile(last, "<cell>", "eval"), self.ns)
                if value is not None:
                    print(repr(value))
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # SystemExit too: the kernel must survive the cell
            res.error_in_exec = e
            tb = e.__traceback__
            # Drop the kernel's own frames so the model sees only its cell.
            while tb is not None and tb.tb_frame.f_code.co_filename != "<cell>":
                tb = tb.tb_next
            text = "".join(traceback.format_exception(type(e), e, tb))
            with _lock:
                if _cell is not None:
                    _cell.traceback.append(text)
        return res


# What a cell's namespace holds, told to the model after each cell: a name from a
# reply that was cut never existed, and a NameError then reads as that.
MAX_NAMES = 40
MAX_NAMES_TEXT = 800
_HIDDEN_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


def _describe(v):
    t = type(v).__name__
    shape = getattr(v, "shape", None)
    if isinstance(shape, tuple) and shape and all(isinstance(n, int) for n in shape):
        return "%s %s" % (t, "x".join(str(n) for n in shape))
    if isinstance(v, (list, tuple, dict, set, str)):
        return "%s of %d" % (t, len(v)) if not isinstance(v, str) else "str"
    return t


def _names(shell):
    import types

    ns = getattr(shell, "user_ns", None) or getattr(shell, "ns", {})
    out = []
    for k, v in list(ns.items()):
        if k.startswith("_") or k in _HIDDEN_NAMES or isinstance(v, types.ModuleType):
            continue
        if callable(v) and getattr(v, "__module__", "") not in ("__main__", None):
            continue  # imported functions and classes
        try:
            out.append("%s (%s)" % (k, _describe(v)))
        except Exception:
            out.append(k)
    more = len(out) - MAX_NAMES
    text = ", ".join(out[:MAX_NAMES])
    if len(text) > MAX_NAMES_TEXT:
        text = text[:MAX_NAMES_TEXT].rsplit(", ", 1)[0]
        more = max(more, 1)
    if more > 0:
        text += ", and %d more" % more
    return text


MAX_MEND_SPACES = 80


def _mend_one_line(code):
    """A cell written on one line with several statements ("import pandas as pd df =
    pd.read_csv(...) print(df)": a small model that wrote no newline escapes in its JSON)
    as those statements on their own lines, when each part compiles and the whole does
    not; None otherwise. The fewest lines win, so `x = 1 + 2` is never split."""
    s = code.strip()
    if "\n" in s or len(s) > 4000:
        return None
    try:
        compile(s, "<cell>", "exec")
        return None
    except SyntaxError:
        pass
    except Exception:
        return None
    cuts = [i for i, ch in enumerate(s) if ch == " "]
    if not cuts or len(cuts) > MAX_MEND_SPACES:
        return None

    ends = cuts + [len(s)]
    best = {len(s): []}  # start -> fewest parts covering s[start:]
    for start in sorted([0] + [c + 1 for c in cuts], reverse=True):
        options = []
        for end in ends:
            if end <= start or (end + 1 if end < len(s) else end) not in best:
                continue
            part = s[start:end].strip()
            if part and _compiles(part):
                options.append([part] + best[end + 1 if end < len(s) else end])
        if options:
            best[start] = min(options, key=len)
    parts = best.get(0)
    return "\n".join(parts) if parts and len(parts) > 1 else None


MAX_MEND_QUOTES = 8


def _escape_string_newlines(code):
    """`code` with each newline inside a one-line string literal written as \\n: what a
    small model meant when its JSON's "\\n" became a real newline inside '...'. None
    when there is none."""
    out, i, n, q, changed = [], 0, len(code), None, False
    while i < n:
        c = code[i]
        if q is None:
            if c == "#":
                j = code.find("\n", i)
                j = n if j < 0 else j
                out.append(code[i:j])
                i = j
            elif c in "'\"":
                q = c * 3 if code[i:i + 3] == c * 3 else c
                out.append(q)
                i += len(q)
            else:
                out.append(c)
                i += 1
        elif c == "\\" and i + 1 < n:
            out.append(code[i:i + 2])
            i += 2
        elif code.startswith(q, i):
            out.append(q)
            i += len(q)
            q = None
        elif c == "\n" and len(q) == 1:
            out.append("\\n")
            changed = True
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out) if changed else None


def _compiles(code):
    try:
        compile(code, "<cell>", "exec")
        return True
    except Exception:
        return False


def _mend_strings(code):
    """A cell that does not compile because its one-line strings hold real newlines:
    with them written as \\n (and then split into statements, if it is one line), or
    else with those strings triple-quoted; None when neither compiles."""
    if _compiles(code):
        return None
    escaped = _escape_string_newlines(code)
    if escaped is not None:
        if _compiles(escaped):
            return escaped
        split = _mend_one_line(escaped)
        if split is not None:
            return split
    return _mend_quotes(code)


def _mend_quotes(code):
    """A cell whose strings in single or double quotes run over several lines (a small
    model's JSON "\\n" inside a Python '...' string: "unterminated string literal") with
    those strings triple-quoted, when that makes it compile; None otherwise."""
    if len(code) > 20000:
        return None
    s = code
    for _ in range(MAX_MEND_QUOTES):
        try:
            compile(s, "<cell>", "exec")
            return s if s != code else None
        except SyntaxError as e:
            if "unterminated string literal" not in str(e.msg) or not e.lineno:
                return None
            lines = s.split("\n")
            start = sum(len(l) + 1 for l in lines[: e.lineno - 1]) + max((e.offset or 1) - 1, 0)
        except Exception:
            return None
        while start < len(s) and s[start] in "rRbBfFuU":
            start += 1
        if start >= len(s) or s[start] not in "'\"" or s[start:start + 3] == s[start] * 3:
            return None
        q = s[start]
        newline = s.find("\n", start)
        if newline < 0:
            return None
        mended = None
        for j in range(newline, len(s)):
            if s[j] != q or s[j - 1] == "\\":
                continue
            t = s[:start] + q * 3 + s[start + 1:j] + q * 3 + s[j + 1:]
            try:
                compile(t, "<cell>", "exec")
                return t
            except SyntaxError as e2:
                # Another broken string further on: keep this close, mend the next.
                end_line = s.count("\n", 0, j) + 1
                if "unterminated string literal" in str(e2.msg) and (e2.lineno or 0) > end_line:
                    mended = t
                    break
            except Exception:
                return None
        if mended is None:
            # The string runs to the end of the cell (a reply cut before its closing
            # quote): closed there, with the brackets it was opened in.
            for closers in ("", ")", "))", ")))", "]", ")]", "])", "}", ")}"):
                t = s[:start] + q * 3 + s[start + 1:].rstrip("\n") + q * 3 + closers
                try:
                    compile(t, "<cell>", "exec")
                    return t
                except Exception:
                    continue
            return None
        s = mended
    return None


MAX_KEPT_BYTES = 64 << 20


def _keep_frames(ns):
    """Copies of the DataFrames and Series in `ns` (pandas already imported), so a cell
    that fails half-way can be undone: a small model runs the same failing cell again
    and again, and each run must start from the same data (`df['x'] = df['x'] * 2`
    twice is not once). None when pandas is not loaded or they are too big to copy."""
    pd = sys.modules.get("pandas")
    if pd is None:
        return None
    kept, size = {}, 0
    for k, v in list(ns.items()):
        if k.startswith("_") or not isinstance(v, (pd.DataFrame, pd.Series)):
            continue
        try:
            used = v.memory_usage(index=True, deep=False)  # a Series' is a number
            size += int(used.sum() if hasattr(used, "sum") else used)
            if size > MAX_KEPT_BYTES:
                return None
            kept[k] = (v, v.copy(deep=True))
        except Exception:
            return None
    return kept


def _undo_frames(ns, kept):
    """Put back the frames a failed cell changed or replaced; their names, sorted."""
    undone = []
    for k, (obj, copy) in kept.items():
        now = ns.get(k)
        try:
            same = now is obj and obj.equals(copy)
        except Exception:
            same = False
        if not same:
            ns[k] = copy
            undone.append(k)
    return sorted(undone)


def _missing_column(err, ns):
    """For a KeyError on a text key that names no column of the session's DataFrames:
    what their columns are, and the line that makes it where one does ("with this
    line: `...`", which the app's fix step puts in for a model that cannot). A small
    model that guessed a column ('count', 'Revenue') otherwise runs the same cell
    again, as the traceback names only the key."""
    if not isinstance(err, KeyError) or len(err.args) != 1 or not isinstance(err.args[0], str):
        return None
    key = err.args[0]
    try:
        import pandas as pd
    except Exception:
        return None
    frames = []
    for k, v in list(ns.items()):
        if k.startswith("_") or not isinstance(v, pd.DataFrame):
            continue
        cols = [str(c) for c in v.columns]
        if key in cols:
            return None  # the key is some frame's column: the error is elsewhere
        shown = ", ".join(cols[:MAX_COLUMNS_SHOWN])
        if len(cols) > MAX_COLUMNS_SHOWN:
            shown += ", and %d more" % (len(cols) - MAX_COLUMNS_SHOWN)
        frames.append("%s has %s" % (k, shown))
    if not frames:
        return None
    note = "%r is not a column of any DataFrame: %s." % (key, "; ".join(frames[:MAX_FRAMES_SHOWN]))
    derived = _time_part(key, ns)
    if derived:
        note += " " + derived
    # A name the model gave a Series of its own and then read as a column of df (a
    # 1.5B model did, eight turns running): the way from one to the other.
    if key.isidentifier() and not key.startswith("_") and key in ns:
        frame = frames[0].split(" ", 1)[0]
        note += " %s is a variable (%s), not a column: use %s itself, or add it first with this line: `%s[%r] = %s`." % (
            key, type(ns[key]).__name__, key, frame, key, key)
    return note


# A DataFrame's writers: called on something else, the traceback names only the type.
_WRITERS = ("to_csv", "to_parquet", "to_excel", "to_json")


def _not_a_table(err, ns):
    """For a writer called on a number or text (`TABLE = df['kWh'].sum()` then
    `TABLE.to_csv(...)`): what the value is and what a table file needs. A 1.5B model
    ran such cells for six turns with only "'numpy.float64' object has no attribute
    'to_csv'" to go on."""
    if not isinstance(err, AttributeError) or getattr(err, "name", None) not in _WRITERS:
        return None
    obj = getattr(err, "obj", None)
    import numbers
    if isinstance(obj, str):
        kind = "text"
    elif isinstance(obj, numbers.Number):
        kind = "a single number"
    else:
        return None
    names = sorted(k for k, v in list(ns.items()) if not k.startswith("_") and v is obj)
    shown = repr(obj) if kind == "text" else str(obj)  # numpy 2 reprs a number as np.int64(3)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    what = "%s is %s (%s)" % (names[0], kind, shown) if names else "The value is %s (%s)" % (kind, shown)
    return ("%s, not a table: .%s writes the rows of a DataFrame. Make it the rows the file is "
            "for (a filter such as df[df[col] > limit], or a groupby with .reset_index()); a single "
            "value belongs in the report's text." % (what, err.name))


# Parts of a time that a model takes for columns (the task said "by hour of week"):
# the name, normalised, and how it is made from a datetime Series `t`.
_TIME_PARTS = {
    "hour": "%s.dt.hour", "hourofday": "%s.dt.hour",
    "dayofweek": "%s.dt.dayofweek", "weekday": "%s.dt.dayofweek", "dow": "%s.dt.dayofweek",
    "hourofweek": "%s.dt.dayofweek * 24 + %s.dt.hour",
    "day": "%s.dt.day", "month": "%s.dt.month", "year": "%s.dt.year", "date": "%s.dt.date",
    "minute": "%s.dt.minute", "weekend": "%s.dt.dayofweek >= 5", "isweekend": "%s.dt.dayofweek >= 5",
}


def _time_part(key, ns):
    """For a missing column named like a part of a time ('hour_of_week'), when a
    DataFrame has a datetime column: the line that makes it. A 1.5B model grouped by
    'hour_of_week' again and again, told only that no frame had it."""
    made = _TIME_PARTS.get(key.lower().replace("_", "").replace(" ", ""))
    if not made:
        return None
    import pandas as pd
    for k, v in list(ns.items()):
        if k.startswith("_") or not isinstance(v, pd.DataFrame):
            continue
        for c in v.columns:
            if pd.api.types.is_datetime64_any_dtype(v[c]):
                t = "%s[%r]" % (k, c)
                return "It can be made from the time column with this line: `%s[%r] = %s`." % (
                    k, key, made.replace("%s", t))
    return None


MAX_COLUMNS_SHOWN = 30
MAX_FRAMES_SHOWN = 3


def _note(mended, requoted, undone, missing=None):
    """What the kernel did to the cell or after it, for the model; None when nothing."""
    notes = []
    if missing:
        notes.append(missing)
    if mended:
        notes.append("This cell was one line holding %d statements; it ran with each on its own line. "
                      "Write each statement on a line of its own." % (mended.count("\n") + 1))
    if requoted:
        notes.append("A string in quotes held real line breaks, so the cell did not compile; it ran "
                     "with them mended. Inside a quoted string, write a line break as \\n.")
    if undone:
        notes.append("The cell failed, so %s %s as before it (the changes it made before the error are undone); "
                     "fix the error and run the cell again." % (", ".join(undone), "is" if len(undone) == 1 else "are"))
    return " ".join(notes) or None


def _run(shell, msg):
    global _cell, _in_cell
    cell = _Cell(msg.get("id"))
    with _lock:
        _cell = cell
    interrupted = False
    err = None
    mended = requoted = None
    undone = []
    kept = _keep_frames(shell.user_ns)
    try:
        _in_cell = True
        _busy.set()
        if _pending_interrupt is not None and _pending_interrupt == cell.id:
            _on_sigint(signal.SIGINT, None)
        code = msg.get("code", "")
        mended = _mend_one_line(code)
        requoted = None if mended else _mend_strings(code)
        res = shell.run_cell(mended or requoted or code, store_history=True)
        _in_cell = False
        err = res.error_before_exec or res.error_in_exec
        if err is not None and kept:
            undone = _undo_frames(shell.user_ns, kept)
    except KeyboardInterrupt:
        interrupted = True
    except BaseException as e:  # the kernel must survive whatever the cell does
        err = e
        _route(2, "%s: %s\n" % (type(e).__name__, e))
    finally:
        _in_cell = False
    _close_figures()
    _end_children()
    _sync_pipes()
    _busy.clear()
    try:
        names = _names(shell)
    except Exception:
        names = None
    try:
        missing = _missing_column(err, shell.user_ns) or _not_a_table(err, shell.user_ns)
    except Exception:
        missing = None
    if interrupted or isinstance(err, KeyboardInterrupt):
        status = "interrupted"
    elif err is not None:
        status = "error"
    else:
        status = "ok"
    with _lock:
        _cell = None
        if cell.figures_dropped:
            cell.err.add("[%d more figures not shown]\n" % cell.figures_dropped)
        cell.flush()
        tb = "\n".join(cell.traceback)
        if status == "interrupted" and not tb:
            tb = "KeyboardInterrupt"
        _send(
            {
                "type": "result",
                "id": cell.id,
                "status": status,
                "stdout": cell.out.capture.text(),
                "stderr": cell.err.capture.text(),
                "traceback": tb,
                "stdout_bytes": cell.out.capture.total,
                "stderr_bytes": cell.err.capture.total,
                "figures": [base64.b64encode(f).decode("ascii") for f in cell.figures],
                "names": names,
                "note": _note(mended, requoted, undone, missing),
            }
        )


def _prewarm(pending):
    """Import what nearly every analysis imports, one module at a time while no
    request waits, so that the model's first `import pandas` is instant."""
    while pending and _requests.empty():
        try:
            __import__(pending.pop(0))
        except BaseException:
            pass


def main():
    try:  # its own process group, so that the host can kill it with all it started
        os.setpgid(0, 0)
    except OSError:
        pass
    _subreaper()
    for which in (1, 2):
        p = _Pump(which)
        p.start()
        _pumps.append(p)
    sys.stdout, sys.stderr = _Writer(1), _Writer(2)
    try:
        import faulthandler

        faulthandler.enable(file=os.fdopen(os.dup(_raw_err), "w"))
    except Exception:
        pass
    threading.Thread(target=_reader, daemon=True).start()
    threading.Thread(target=_flusher, daemon=True).start()
    signal.signal(signal.SIGINT, _on_sigint)
    _send({"type": "ready", "pid": os.getpid()})
    try:
        shell = _make_shell()
    except Exception as e:
        shell = _PlainShell()
        _write_raw(
            "IPython is not usable in this image (%s: %s): cells run as plain Python, "
            "without display(), `!` or `%%` lines\n" % (type(e).__name__, e)
        )
    pending = list(PREWARM) if os.environ.get("SANDALYST_PREWARM", "1") != "0" else []
    while True:
        _prewarm(pending)
        msg = _requests.get()
        if msg is None:
            return
        _run(shell, msg)


time.tzset()
main()
