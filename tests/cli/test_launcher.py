"""The native launcher (launcher/vaultmem.c) decides as the Python client does.

It is compiled here against a stand-in "python" that only records that it ran, and talks to
a stand-in watcher socket that records the request and answers with a frame. For every case
the launcher must forward exactly when vaultmem/daemon/client.py would, send the request
the Python client would send, print the frame as it is, and hand anything unusual to
Python. The real launcher and the real watcher meet in tests/integration/test_watcher.py
(which runs the installed `vaultmem`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from vaultmem.daemon import client

REPO = Path(__file__).resolve().parents[2]
FALLBACK = 99  # exit code of the stand-in python


@pytest.fixture(scope="module")
def launcher(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("no C compiler: the Python script is the installed command")
    tmp = tmp_path_factory.mktemp("launcher")
    fake = tmp / "python"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$VMTEST_MARKER"\nexit 99\n')
    fake.chmod(0o755)
    # The header generated from the Python lists, by the command the Makefile runs.
    header = subprocess.run(
        [sys.executable, "-m", "vaultmem.daemon.forwarding", "--header"], check=True, capture_output=True, text=True
    ).stdout
    (tmp / "forward.h").write_text(header)
    out = tmp / "vaultmem"
    subprocess.run(
        [cc, "-O2", "-Wall", "-Wextra", "-Werror", "-std=c11", f"-I{tmp}", f'-DVM_PYTHON="{fake}"', "-o", str(out),
         str(REPO / "launcher" / "vaultmem.c")],
        check=True, capture_output=True,
    )  # fmt: skip
    return out


@dataclass
class FakeWatcher:
    """A socket that answers every request with `reply` and keeps what it was sent."""

    path: Path
    reply: bytes = b"VMF1 7 4 3\nout\nerr"
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(self.path))
        self.sock.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                self.requests.append(json.loads(data))
                conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".vaultmem").mkdir(parents=True)
    (root / "shared" / "deep").mkdir(parents=True)
    (root / "vaultmem.toml").write_text("")
    return root.resolve()


@pytest.fixture
def watcher(vault: Path) -> Iterator[FakeWatcher]:
    fake = FakeWatcher(vault / ".vaultmem" / "watcher.sock")
    yield fake
    fake.close()


def run(launcher: Path, argv: list[str], cwd: Path, env: dict[str, str], tmp_path: Path) -> tuple[int, str, str, bool]:
    marker = tmp_path / "fallback"
    marker.unlink(missing_ok=True)
    full_env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "VMTEST_MARKER": str(marker), **env}
    proc = subprocess.run([str(launcher), *argv], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=30)
    return proc.returncode, proc.stdout, proc.stderr, marker.exists()


CASES: list[tuple[list[str], str, dict[str, str]]] = [
    (["search", "boundary layer", "--json"], ".", {}),
    (["--json", "search", "x", "--mode", "bm25"], "shared/deep", {}),
    (["--vault", "VAULT", "--ghost", "alice", "get", "Note"], "/", {}),
    (["--vault=VAULT", "query", "x", "--regex"], "/", {}),
    (["--ghost=alice", "--json", "get", "Note"], ".", {}),
    (["search", "x", "--vault", "VAULT"], "/", {}),
    (["status"], ".", {"VAULTMEM_GHOST": "bob", "NO_COLOR": "1", "UNRELATED": "x", "COLUMNS": "80"}),
    (["index", "--json"], ".", {}),
    (["reference", "x"], "/", {"VAULTMEM_VAULT": "VAULT"}),
    (["search", "x", "--vault", "~/vault"], "/", {}),
    (["search", "--", "--help"], ".", {}),
    # not forwarded: Python runs them
    (["search", "x", "--help"], ".", {}),
    (["-h"], ".", {}),
    (["note", "create", "x"], ".", {}),
    (["--version"], ".", {}),
    ([], ".", {}),
    (["search", "x"], "/", {}),  # no vault above /
    (["search", "x", "--vault", "/nonexistent"], ".", {}),
    (["search", "x", "--vault", "~nobody/vault"], "/", {}),  # ~user: left to Python
]


@pytest.mark.parametrize(("argv", "where", "env"), CASES)
def test_forwards_exactly_when_the_python_client_does(
    launcher: Path, vault: Path, watcher: FakeWatcher, tmp_path: Path, argv: list[str], where: str, env: dict[str, str]
) -> None:
    argv = [a.replace("VAULT", str(vault)) for a in argv]
    env = {k: v.replace("VAULT", str(vault)) for k, v in env.items()}
    cwd = Path("/") if where == "/" else vault / where
    code, out, err, fell_back = run(launcher, argv, cwd, env, tmp_path)

    py_env = {"HOME": str(tmp_path), **env}
    expanded = [a.replace("~", str(tmp_path), 1) if a.startswith("~/") else a for a in argv]
    expect = client.forwardable(argv) is not None and client.find_root(expanded, py_env, str(cwd)) == str(vault)
    if any(a.startswith("~nobody") for a in argv):
        expect = False
    if expect:
        assert (code, out, err, fell_back) == (7, "out\n", "err", False)
        (request,) = watcher.requests
        assert request == {
            "op": "cli",
            "argv": argv,
            "env": client.passed_env(env),
            "tty": False,
            "cwd": str(cwd),
            "reply": "frame",
        }
    else:
        assert (code, fell_back) == (FALLBACK, True)
        assert watcher.requests == []


@pytest.mark.parametrize(
    "reply",
    [
        b'{"error": {"code": "stopping", "message": "the watcher is stopping"}}\n',
        b"VMF1 0 10 0\nshort",  # fewer bytes than announced
        b"VMF1 0 x 0\n",
        b"",  # closed without a word
    ],
)
def test_anything_but_a_whole_frame_goes_to_python(
    launcher: Path, vault: Path, watcher: FakeWatcher, tmp_path: Path, reply: bytes
) -> None:
    watcher.reply = reply
    code, out, _, fell_back = run(launcher, ["search", "x"], vault, {}, tmp_path)
    assert (code, out, fell_back) == (FALLBACK, "", True)
    assert len(watcher.requests) == 1


def test_keepalive_spaces_and_large_output(launcher: Path, vault: Path, watcher: FakeWatcher, tmp_path: Path) -> None:
    body = ("ünïcödé " * 50_000).encode()
    watcher.reply = b"   " + f"VMF1 0 {len(body)} 0\n".encode() + body
    code, out, err, fell_back = run(launcher, ["search", "x"], vault, {}, tmp_path)
    assert (code, err, fell_back) == (0, "", False)
    assert out.encode() == body


def test_arguments_are_sent_as_json_strings(launcher: Path, vault: Path, watcher: FakeWatcher, tmp_path: Path) -> None:
    tricky = 'quote " backslash \\ tab \t newline \n ctrl \x01 日本 🚀'
    code, _, _, fell_back = run(launcher, ["search", tricky], vault, {"VAULTMEM_X": tricky}, tmp_path)
    assert (code, fell_back) == (7, False)
    assert watcher.requests[0]["argv"] == ["search", tricky]
    assert watcher.requests[0]["env"] == {"VAULTMEM_X": tricky}


def test_bytes_that_are_not_utf8_go_to_python(
    launcher: Path, vault: Path, watcher: FakeWatcher, tmp_path: Path
) -> None:
    marker = tmp_path / "fallback"
    env = {"PATH": os.environ["PATH"], "VMTEST_MARKER": str(marker)}
    proc = subprocess.run([str(launcher), "search", b"caf\xe9"], cwd=vault, env=env, capture_output=True, timeout=30)
    assert proc.returncode == FALLBACK and marker.exists()
    assert watcher.requests == []


def test_no_socket_goes_to_python(launcher: Path, vault: Path, tmp_path: Path) -> None:
    code, _, _, fell_back = run(launcher, ["search", "x"], vault, {}, tmp_path)
    assert (code, fell_back) == (FALLBACK, True)


def test_forwarding_lists_name_the_cli_s_own_commands_and_root_options() -> None:
    """forwarding.py states what is forwarded once; it must name what the CLI really has."""
    import typer.main

    from vaultmem.cli.main import COMMANDS, app
    from vaultmem.daemon import forwarding

    assert set(forwarding.COMMANDS) <= set(COMMANDS)
    group = typer.main.get_command(app)
    root = {opt: param for param in group.params for opt in param.opts}
    assert all(not root[opt].is_flag for opt in forwarding.ROOT_OPTIONS)
    assert all(root[opt].is_flag for opt in forwarding.ROOT_FLAGS)


@pytest.mark.parametrize(
    "argv",
    [
        ["-j", "search", "x"],
        ["--json", "search", "x"],
        ["--model", "m", "--reason", "r", "search", "x"],
        ["--model=m", "-j", "--ghost", "alice", "search", "x"],
    ],
)
def test_every_root_option_before_the_command_is_forwarded(argv: list[str]) -> None:
    """`vaultmem -j search` ran in Python beside a watcher and waited 15 s on its lock (exit
    6): the short `-j`, `--model` and `--reason` before the command word were not known."""
    from vaultmem.daemon.client import forwardable

    assert forwardable(argv) == "search"
