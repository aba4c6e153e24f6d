"""The watcher's Unix socket: JSON lines, one request and one reply per connection.

A thread accepts connections and a short-lived thread per connection reads the request,
hands it to `dispatch` and writes the reply, so a slow or broken client never blocks the
others. Whatever a client sends (not JSON, not an object, an unknown op, a line too long,
nothing at all) it gets an error reply or a closed connection; the watcher goes on. Work on
the indexes is not done here: `dispatch` queues it for the watcher's one worker (runner.py)
and returns a `Pending` the connection thread waits on.

A space goes back the moment a request is read (JSON and framed replies allow leading
spaces): a client that gets none within a couple of seconds has met a hung watcher (stopped,
or its threads wedged) and answers by itself (forwarding.py FIRST_BYTE_S). While a request
waits, a keepalive space follows every few seconds, unless the worker has stopped making
progress (`stalled`): then the request is answered `unresponsive` at once, and the client
answers by itself too.

Only processes of the watcher's own user may connect: the socket file is created mode 0600
and, where the platform says who is calling (SO_PEERCRED), other users are refused.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import threading
from collections.abc import Callable
from typing import Any

from vaultmem.daemon.client import peer_uid
from vaultmem.errors import VaultmemError

MAX_REQUEST_BYTES = 1024 * 1024
READ_TIMEOUT_S = 10.0
KEEPALIVE_S = 5.0

log = logging.getLogger("vaultmem.watcher")


class SocketUnavailable(VaultmemError):
    """The watcher cannot listen where it must (a foreign file there, no permission)."""

    code = "socket_unavailable"


class BadRequest(ValueError):
    """A request the protocol does not allow; answered with an error, never raised further."""


class Pending:
    """A reply the worker has not made yet."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self.reply: dict[str, Any] = {}

    def finish(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self._done.set()

    def wait(self, timeout: float) -> bool:
        return self._done.wait(timeout)


Dispatch = Callable[[dict[str, Any]], "dict[str, Any] | Pending"]
# Why the worker is not getting on with its queue, or None: see runner.py Watcher.stalled.
Stalled = Callable[[], "str | None"]


def _never_stalled() -> str | None:
    return None


def error_reply(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def remove_stale_socket(path: str) -> None:
    """Remove a socket file left behind by a watcher that died (the caller holds the index
    lock, so no live watcher of this vault owns it). Never removes anything else."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        raise SocketUnavailable(f"{path} exists and is not a socket of this user; remove it or move the vault")
    os.unlink(path)


class RequestServer:
    def __init__(self, path: str, dispatch: Dispatch, stalled: Stalled = _never_stalled) -> None:
        self.path = path
        self.dispatch = dispatch
        self.stalled = stalled
        self._sock: socket.socket | None = None
        self._inode: int | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        remove_stale_socket(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)  # the socket file is born 0600: no window for others
        try:
            sock.bind(self.path)
        except OSError as exc:
            sock.close()
            raise SocketUnavailable(f"cannot listen on {self.path}: {exc.strerror}") from None
        finally:
            os.umask(old_umask)
        sock.listen(128)
        self._inode = os.lstat(self.path).st_ino
        self._sock = sock
        self._thread = threading.Thread(target=self._accept_loop, name="vaultmem-accept", daemon=True)
        self._thread.start()

    def still_bound(self) -> bool:
        """Whether the socket path is still the socket this server bound (not removed, nor
        replaced by a file, a symlink or another process's socket)."""
        try:
            st = os.lstat(self.path)
        except OSError:
            return False
        return stat.S_ISSOCK(st.st_mode) and st.st_ino == self._inode

    def close(self) -> None:
        """Stop accepting and remove the socket file (if it is still ours)."""
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
            except OSError:
                pass
            sock.close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            if self._inode is not None and os.stat(self.path).st_ino == self._inode:
                os.unlink(self.path)
        except OSError:
            pass

    # --- connections ------------------------------------------------------------------

    def _accept_loop(self) -> None:
        while True:
            sock = self._sock
            if sock is None:
                return
            try:
                conn, _ = sock.accept()
            except OSError:
                return  # closed by close()
            threading.Thread(target=self._serve, args=(conn,), name="vaultmem-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                framed = False
                try:
                    reply, framed = self._answer(conn)
                except OSError:
                    raise
                except Exception as exc:
                    # The last guard of a connection thread: whatever a request trips over
                    # is logged and answered, and the watcher goes on serving.
                    log.exception("request failed")
                    reply = error_reply("internal", f"{type(exc).__name__}: {exc}")
                conn.sendall(frame(reply) if framed and "exit_code" in reply else encode_reply(reply))
            except OSError:
                pass  # the client went away; nothing to tell it

    def _answer(self, conn: socket.socket) -> tuple[dict[str, Any], bool]:
        """(the reply, whether the client asked for a framed reply)."""
        if not same_user(conn):
            return error_reply("forbidden", "this watcher serves its own user only"), False
        try:
            request = parse_request(read_line(conn))
            conn.sendall(b" ")  # read: the client now knows this watcher is alive
            why = self.stalled() if request["op"] != "ping" else None
            if why is not None:
                return error_reply("unresponsive", why), False
            outcome = self.dispatch(request)
        except BadRequest as exc:
            return error_reply("invalid_request", str(exc)), False
        framed = request.get("reply") == "frame"
        if isinstance(outcome, Pending):
            while not outcome.wait(KEEPALIVE_S):
                why = self.stalled()
                if why is not None:
                    return error_reply("unresponsive", why), False
                conn.sendall(b" ")
            return outcome.reply, framed
        return outcome, framed


def encode_reply(reply: dict[str, Any]) -> bytes:
    return json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n"


def frame(reply: dict[str, Any]) -> bytes:
    """A command's output as client.py reads it without a JSON parser (see its docstring)."""
    out = str(reply.get("stdout", "")).encode("utf-8", errors="replace")
    err = str(reply.get("stderr", "")).encode("utf-8", errors="replace")
    head = f"VMF1 {int(reply['exit_code'])} {len(out)} {len(err)}\n".encode("ascii")
    return head + out + err


def read_line(conn: socket.socket) -> bytes:
    conn.settimeout(READ_TIMEOUT_S)
    data = bytearray()
    while b"\n" not in data:
        try:
            chunk = conn.recv(1 << 16)
        except TimeoutError:
            raise BadRequest(f"no complete request line within {READ_TIMEOUT_S:.0f} s") from None
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST_BYTES:
            raise BadRequest(f"request longer than {MAX_REQUEST_BYTES} bytes")
    conn.settimeout(None)
    return bytes(data.split(b"\n", 1)[0])


def parse_request(line: bytes) -> dict[str, Any]:
    if not line.strip():
        raise BadRequest("empty request")
    try:
        request = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadRequest(f"not a JSON line: {exc}") from None
    if not isinstance(request, dict) or not isinstance(request.get("op"), str):
        raise BadRequest('a request is a JSON object with a string "op"')
    return request


def same_user(conn: socket.socket) -> bool:
    """Whether the client is a process of this watcher's own user (where the platform says;
    elsewhere the owner-only folder of the socket is the guard)."""
    try:
        uid = peer_uid(conn)
    except OSError:
        return False
    return uid is None or uid == os.getuid()
