# The sandbox's end of the egress proxy (`allow:` network mode). The container has no
# network interface but loopback; the proxy runs on the host and listens on a unix
# socket bind-mounted into the container. This forwards every TCP connection to
# 127.0.0.1:PORT (what HTTP_PROXY/HTTPS_PROXY name) to that socket, bytes untouched,
# so pip, requests and urllib reach the proxy. One thread, non-blocking sockets: it
# takes no process slots from the code's pids limit whatever the code opens.
import os
import selectors
import socket
import sys

SOCKET = os.environ["SANDALYST_EGRESS_SOCKET"]
PORT = int(os.environ["SANDALYST_EGRESS_PORT"])
CHUNK = 64 * 1024
# A side whose peer does not read is not read further past this many bytes.
MAX_PENDING = 1024 * 1024
MAX_OPEN = 128

sel = selectors.DefaultSelector()


class Side:
    def __init__(self, sock):
        self.sock = sock
        self.out = bytearray()  # waiting to be written to this side
        self.eof_in = False  # this side closed its write end
        self.shut_out = False  # we closed our write end towards this side
        self.peer = None

    def mask(self):
        m = 0
        if not self.eof_in and len(self.peer.out) < MAX_PENDING:
            m |= selectors.EVENT_READ
        if self.out:
            m |= selectors.EVENT_WRITE
        return m


open_pairs = 0


def close_pair(side):
    global open_pairs
    for s in (side, side.peer):
        try:
            sel.unregister(s.sock)
        except (KeyError, ValueError):
            pass
        try:
            s.sock.close()
        except OSError:
            pass
    open_pairs -= 1


def done(side):
    return side.eof_in and side.peer.eof_in and not side.out and not side.peer.out


def step(side, events):
    peer = side.peer
    if events & selectors.EVENT_READ:
        try:
            data = side.sock.recv(CHUNK)
        except BlockingIOError:
            data = None
        except OSError:
            return close_pair(side)
        if data == b"":
            side.eof_in = True
            if not peer.out:
                half_close(peer)
        elif data:
            peer.out += data
    if events & selectors.EVENT_WRITE and side.out:
        try:
            n = side.sock.send(side.out)
            del side.out[:n]
        except BlockingIOError:
            pass
        except OSError:
            return close_pair(side)
        if not side.out and peer.eof_in:
            half_close(side)
    if done(side):
        return close_pair(side)
    for s in (side, peer):
        rearm(s)


def half_close(side):
    if not side.shut_out:
        side.shut_out = True
        try:
            side.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def rearm(side):
    m = side.mask()
    try:
        key = sel.get_key(side.sock)
    except (KeyError, ValueError):
        key = None
    if m and key:
        sel.modify(side.sock, m, side)
    elif m:
        sel.register(side.sock, m, side)
    elif key:
        sel.unregister(side.sock)


def accept(server):
    global open_pairs
    try:
        client, _ = server.accept()
    except OSError:
        return
    if open_pairs >= MAX_OPEN:
        client.close()
        return
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(SOCKET)
    except OSError:
        client.close()
        upstream.close()
        return
    open_pairs += 1
    a, b = Side(client), Side(upstream)
    a.peer, b.peer = b, a
    for s in (a, b):
        s.sock.setblocking(False)
        sel.register(s.sock, selectors.EVENT_READ, s)


server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", PORT))
server.listen(128)
server.setblocking(False)
sel.register(server, selectors.EVENT_READ, None)
print("ready", flush=True)
sys.stdout.close()
while True:
    for key, events in sel.select():
        if key.data is None:
            accept(key.fileobj)
        else:
            step(key.data, events)
