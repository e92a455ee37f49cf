# Sandalyst's persistent Python kernel. Runs inside the sandbox container, started
# by the host with `python3 -u -c <this source>` over one exec's stdin/stdout.
#
# Protocol: one JSON object per line.
#   host -> kernel (stdin):  {"type": "execute", "id": N, "code": "..."}
#                            {"type": "interrupt"}
#                            {"type": "killpg", "pgid": G}   (no reply)
#   kernel -> host (stdout): {"type": "ready", "pid": P}
#                            {"type": "result", "id": N, "status": "ok|error|interrupted",
#                             "stdout": "...", "stderr": "...", "traceback": "...",
#                             "stdout_bytes": B, "stderr_bytes": B}
# The protocol owns the original fd 1; fd 1 is then pointed at fd 2 so that stray
# writes (C code, subprocesses) cannot corrupt it; they reach the host as raw stderr.
import ast
import json
import os
import queue
import signal
import sys
import threading
import time
import traceback

CAP = int(os.environ.get("SANDALYST_OUTPUT_CAP", "32768"))

_proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8", errors="replace")
os.dup2(2, 1)


class Capture:
    """A text stream that keeps the head and the tail of what is written, up to CAP."""

    def __init__(self):
        self.head = []
        self.head_len = 0
        self.tail = []
        self.tail_len = 0
        self.total = 0

    def write(self, s):
        if not isinstance(s, str):
            s = str(s)
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
        return len(s)

    def flush(self):
        pass

    def isatty(self):
        return False

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


def _send(obj):
    _proto.write(json.dumps(obj) + "\n")
    _proto.flush()


_requests = queue.Queue()
_busy = threading.Event()


def _killpg(pgid):
    try:
        pgid = int(pgid)
    except (TypeError, ValueError):
        return
    if pgid <= 1 or pgid == os.getpgid(0):
        return
    for _ in range(3):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            return
        time.sleep(0.02)


def _reader():
    # Reads the host's requests; an interrupt is delivered at once as SIGINT so that
    # it lands even inside time.sleep or a blocking read.
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("type") == "interrupt":
            if _busy.is_set():
                os.kill(os.getpid(), signal.SIGINT)
        elif msg.get("type") == "killpg":
            # Done here, not by a new process: a fork bomb may hold every free pid.
            _killpg(msg.get("pgid"))
        else:
            _requests.put(msg)
    _requests.put(None)


def _run(code, env):
    tree = ast.parse(code, "<cell>", "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<cell>", "exec"), env)
    if last is not None:
        value = eval(compile(last, "<cell>", "eval"), env)
        if value is not None:
            print(repr(value))


def main():
    env = {"__name__": "__main__", "__builtins__": __builtins__}
    threading.Thread(target=_reader, daemon=True).start()
    _send({"type": "ready", "pid": os.getpid()})
    while True:
        try:
            msg = _requests.get()
        except KeyboardInterrupt:  # a late interrupt for a cell that already ended
            continue
        if msg is None:
            return
        out, err = Capture(), Capture()
        status, tb = "ok", ""
        sys.stdout, sys.stderr = out, err
        _busy.set()
        try:
            _run(msg.get("code", ""), env)
        except KeyboardInterrupt:
            status = "interrupted"
            tb = traceback.format_exc(limit=-3)
        except BaseException:  # SystemExit too: the kernel must survive the cell
            status = "error"
            etype, value, tbk = sys.exc_info()
            # Drop the kernel's own frames so the model sees only its cell.
            while tbk is not None and tbk.tb_frame.f_code.co_filename != "<cell>":
                tbk = tbk.tb_next
            tb = "".join(traceback.format_exception(etype, value, tbk))
        finally:
            _busy.clear()
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        if "matplotlib.pyplot" in sys.modules:
            try:  # keep figures from piling up between cells
                sys.modules["matplotlib.pyplot"].close("all")
            except Exception:
                pass
        _send(
            {
                "type": "result",
                "id": msg.get("id"),
                "status": status,
                "stdout": out.text(),
                "stderr": err.text(),
                "traceback": tb,
                "stdout_bytes": out.total,
                "stderr_bytes": err.total,
            }
        )


signal.signal(signal.SIGINT, signal.default_int_handler)
time.tzset()
main()
