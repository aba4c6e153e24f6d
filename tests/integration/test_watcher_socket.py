"""Issue 22, item 2: the watcher's socket can be neither taken nor impersonated by another
local user. A vault whose socket path is too long gets one in a folder only its user may
enter; a folder someone else made is never used; and a client (Python or the native
launcher) that finds another user's process listening sends it nothing."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmem.daemon import paths
from vaultmem.daemon.client import exchange, forward

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="impersonating another user needs root")


def _long_vault(tmp_path: Path) -> Path:
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    deep.mkdir(parents=True)
    (deep / "vaultmem.toml").write_text('[vault]\nghosts = ["alice"]\n\n[embedding]\nbackend = "none"\n')
    return deep


def test_a_long_vault_path_gets_its_socket_in_a_private_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _long_vault(tmp_path)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    bound = paths.bind_path(str(root))
    assert bound is not None and Path(bound).parent == runtime
    runtime.chmod(0o755)  # others may enter it: not used
    bound = paths.bind_path(str(root))
    assert bound is not None and Path(bound).parent == Path(f"/tmp/vaultmem-{os.getuid()}")
    assert paths.private(str(Path(bound).parent))


@as_root
def test_a_socket_folder_someone_else_made_is_never_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _long_vault(tmp_path)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    fake_tmp = f"/tmp/vaultmem-{os.getuid()}"
    saved = None
    if os.path.lexists(fake_tmp):
        saved = fake_tmp + f".saved-{os.getpid()}"
        os.rename(fake_tmp, saved)
    try:
        os.mkdir(fake_tmp, 0o777)
        os.chmod(fake_tmp, 0o777)
        os.chown(fake_tmp, NOBODY, NOBODY)  # made first by another user
        assert paths.bind_path(str(root)) is None
        from vaultmem.daemon.runner import Watcher
        from vaultmem.daemon.server import SocketUnavailable

        with pytest.raises(SocketUnavailable, match="no private place"):
            Watcher(root, lambda: None)  # type: ignore[arg-type,return-value]
        # a socket recorded there is not spoken to either
        (root / ".vaultmem").mkdir(mode=0o700)
        (root / ".vaultmem" / "watcher.json").write_text(f'{{"socket": "{fake_tmp}/vaultmem-x.sock"}}')
        assert paths.connect_path(str(root)) is None
    finally:
        os.rmdir(fake_tmp)
        if saved:
            os.rename(saved, fake_tmp)


LISTENER = textwrap.dedent(
    """
    import os, socket, sys
    path, heard = sys.argv[1], sys.argv[2]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    os.chmod(path, 0o777)
    os.setgid(65534)
    os.setuid(65534)  # from here on, another user: its peer credentials say so
    sock.listen(8)
    open(heard + ".ready", "w").close()
    while True:
        conn, _ = sock.accept()
        conn.settimeout(2)
        data = b""
        try:
            while chunk := conn.recv(65536):
                data += chunk
        except OSError:
            pass
        with open(heard, "ab") as fh:
            fh.write(data)
        conn.close()
    """
)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder another user can reach (pytest's own tmp folders are the owner's only)."""
    folder = Path(tempfile.mkdtemp(prefix="vaultmem-peer-", dir="/tmp"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@as_root
def test_a_listener_of_another_user_hears_nothing(tmp_path: Path, shared_tmp: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "vaultmem.toml").write_text('[vault]\nghosts = ["alice"]\n\n[embedding]\nbackend = "none"\n')
    state = root / ".vaultmem"
    state.mkdir(mode=0o700)
    sock_path = str(state / "watcher.sock")
    heard = shared_tmp / "heard.bin"
    heard.touch()
    os.chmod(heard, 0o666)
    proc = subprocess.Popen([sys.executable, "-c", LISTENER, sock_path, str(heard)])
    try:
        deadline = time.monotonic() + 10
        while not Path(str(heard) + ".ready").exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        secret = {"op": "cli", "argv": ["search", "--ghost", "alice", "secret words"], "env": {"VAULTMEM_X": "s3"}}
        reply, why = exchange(sock_path, secret)
        assert (reply, why) == (None, "foreign")
        # the CLI (Python client, then the native launcher) runs the command itself instead
        assert forward(["--vault", str(root), "status", "--json"]) is None
        launcher = Path(sys.executable).parent / "vaultmem"
        env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
        env.update(VAULTMEM_NO_AUTOSTART="1", VAULTMEM_CANARY="canary-s3")
        done = subprocess.run(
            [str(launcher), "--vault", str(root), "search", "launcher-secret", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode in (0, 6), done.stderr  # answered without the foreign listener
        time.sleep(0.5)
        assert heard.read_bytes() == b"", heard.read_bytes()[:200]
    finally:
        proc.kill()
        proc.wait()


def test_the_server_refuses_a_client_of_another_user(shared_tmp: Path) -> None:
    """The other direction (server.py same_user): a connection whose peer is another user
    gets `forbidden` and no work is done."""
    from vaultmem.daemon.server import RequestServer

    calls: list[object] = []
    path = str(shared_tmp / "w.sock")
    server = RequestServer(path, lambda request: calls.append(request) or {"ok": True})
    server.start()
    try:
        if os.geteuid() != 0:
            pytest.skip("connecting as another user needs root")
        code = textwrap.dedent(
            f"""
            import os, socket
            os.setgid(65534); os.setuid(65534)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect({path!r})
            try:
                s.sendall(b'{{"op": "ping"}}\\n')
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server answers before it reads, and may have closed already
            print(s.recv(65536).decode())
            """
        )
        os.chmod(path, 0o777)  # even if the file mode let them in
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
        assert "forbidden" in out.stdout, out.stderr
        assert calls == []
        with socket.socket(socket.AF_UNIX) as me:  # the owner is served
            me.connect(path)
            me.sendall(b'{"op": "ping"}\n')
            reply = b""
            while chunk := me.recv(65536):
                reply += chunk
            assert b'"ok": true' in reply
    finally:
        server.close()
