"""Issue 3, acceptance 7: Chroma in http mode, against a real `chroma run` server started
here, gives the same search results as embedded mode (real all-MiniLM-L6-v2 embeddings).
`VAULTMEM_CHROMA_URL` selects http mode over the config file."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._embedders import REPO
from tests.conftest import Cli
from tests.integration._vaults import comparable, make_vault, note
from vaultmem.index.vectors import SEARCH_EF

CHROMA = REPO / ".venv" / "bin" / "chroma"

NOTES = {
    "shared/kettle.md": (
        "Descaling a kettle",
        "Boil a mix of water and white vinegar, leave it for an hour, rinse twice.",
    ),
    "shared/bike.md": ("Fixing a flat tyre", "Lever the tyre off the rim, find the puncture, patch the inner tube."),
    "shared/sourdough.md": (
        "Sourdough starter",
        "Feed the starter flour and water daily; it is ready when it doubles.",
    ),
    "shared/ssh.md": ("SSH keys", "Generate an ed25519 key pair and copy the public key to the server."),
    "shared/plants.md": ("Watering houseplants", "Water when the top soil is dry; overwatering rots the roots."),
    "shared/taxes.md": ("Filing taxes", "Collect receipts and income statements before the April deadline."),
}
QUERIES = [
    "how do I clean limescale out of my kettle",
    "bicycle wheel puncture repair",
    "bread baking with wild yeast",
    "logging into a remote machine without a password",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_chroma(data: Path, log_path: Path) -> tuple[str, subprocess.Popen[bytes]] | None:
    """`chroma run` on a port free a moment ago, once it answers; None when another process
    took the port first (a busy machine): the caller tries another."""
    port = _free_port()
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [str(CHROMA), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            if "in use" in log_path.read_text():
                return None
            raise AssertionError(f"chroma run exited: {log_path.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as resp:
                if resp.status == 200:
                    return url, proc
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("chroma run did not answer within 60 s")
        time.sleep(0.2)


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    if not CHROMA.exists():
        pytest.skip("the chroma console script is not installed")
    started = None
    for _ in range(5):
        started = _start_chroma(tmp_path / "chroma-server", tmp_path / "chroma.log")
        if started is not None:
            break
    assert started is not None, "no free port in five tries"
    url, proc = started
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


def _vault(root: Path) -> Path:
    make_vault(root, backend="auto")
    for rel, (title, body) in NOTES.items():
        note(root, rel, f"# {title}\n\n{body}\n", title=title)
    return root


@pytest.mark.slow
def test_http_mode_gives_the_same_results_as_embedded(
    tmp_path: Path, chroma_server: str, real_model_available: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded = Cli(_vault(tmp_path / "embedded"))
    first = embedded.ok("index")
    assert first["vectors"].startswith("sentence-transformers|all-MiniLM-L6-v2|384|")
    assert (tmp_path / "embedded" / ".vaultmem" / "chroma").is_dir()
    expected = {
        (m, q): comparable(embedded.ok("search", q, "--mode", m)) for m in ("vector", "hybrid") for q in QUERIES
    }

    http_root = tmp_path / "http"
    shutil.copytree(tmp_path / "embedded", http_root, ignore=shutil.ignore_patterns(".vaultmem"))
    http = Cli(http_root)
    monkeypatch.setenv("VAULTMEM_CHROMA_URL", chroma_server)
    status = http.ok("status")
    assert status["index"]["chroma"] == {"mode": "http", "url": chroma_server}
    report = http.ok("index")
    assert report["embedded_chunks"] == first["embedded_chunks"] and report["vectors"] == first["vectors"]
    assert not (http_root / ".vaultmem" / "chroma").exists()
    got = {(m, q): comparable(http.ok("search", q, "--mode", m)) for m in ("vector", "hybrid") for q in QUERIES}
    assert [r[0]["summary"]["path"] for r in got.values()][:4] == [
        "shared/kettle.md", "shared/bike.md", "shared/sourdough.md", "shared/ssh.md"
    ]  # fmt: skip
    for key, want in expected.items():
        got_paths = [r["summary"]["path"] for r in got[key]]
        assert got_paths == [r["summary"]["path"] for r in want], key
        for a, b in zip(got[key], want, strict=True):
            assert a["summary"]["score"] == pytest.approx(b["summary"]["score"], rel=1e-4), key

    # the server holds this vault's collection, with every chunk
    import chromadb

    client = chromadb.HttpClient(host="127.0.0.1", port=int(chroma_server.rsplit(":", 1)[1]))
    names = [c if isinstance(c, str) else c.name for c in client.list_collections()]
    assert len(names) == 1
    assert client.get_collection(names[0]).count() == report["embedded_chunks"]
    # and searches it as wide as the embedded store does (vectors.SEARCH_EF)
    assert client.get_collection(names[0]).configuration_json["hnsw"]["ef_search"] == SEARCH_EF

    # an edit reaches the server too
    note(
        http_root, "shared/taxes.md", "# Filing taxes\n\nNow about descaling a coffee machine.\n", title="Filing taxes"
    )
    assert http.ok("index")["updated"] == 1
    assert client.get_collection(names[0]).count() == report["embedded_chunks"]


def test_unreachable_server_is_a_clear_error(
    tmp_path: Path, hash_embedder: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = Cli(_vault(tmp_path / "v"))
    monkeypatch.setenv("VAULTMEM_CHROMA_URL", f"http://127.0.0.1:{_free_port()}")
    res = cli("index")
    assert res.exit_code != 0
    assert "Traceback" not in res.stdout
    assert set(res.data) == {"error"} and "Chroma" in res.data["error"]["message"]


def _results(cli: Cli) -> dict[tuple[str, str], list[tuple[str, float]]]:
    return {
        (m, q): [(r["summary"]["path"], r["summary"]["score"]) for r in comparable(cli.ok("search", q, "--mode", m))]
        for m in ("vector", "hybrid")
        for q in QUERIES
    }


@pytest.mark.slow
def test_two_clones_on_one_server_keep_their_vectors_apart(
    tmp_path: Path, chroma_server: str, real_model_available: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27, item 4: two clones of one vault that have diverged (one deleted a note, the
    other added and edited some) point at one `chroma run` server: each searches exactly as
    it would with its own embedded Chroma, and an edit in one does not move the other."""
    base = _vault(tmp_path / "base")
    clones = {}
    for name in ("one", "two"):
        clones[name] = tmp_path / name
        shutil.copytree(base, clones[name], ignore=shutil.ignore_patterns(".vaultmem"))
    (clones["one"] / "shared" / "bike.md").unlink()
    note(clones["two"], "shared/espresso.md", "# Espresso machine\n\nDescale the boiler with citric acid monthly.\n",
         title="Espresso machine")  # fmt: skip
    note(clones["two"], "shared/ssh.md", "# SSH keys\n\nUse a hardware key and an agent; passwords are off.\n",
         title="SSH keys")  # fmt: skip
    want = {}
    for name, root in clones.items():  # each clone's results with embedded Chroma
        embedded = tmp_path / f"{name}-embedded"
        shutil.copytree(root, embedded)
        Cli(embedded).ok("index")
        want[name] = _results(Cli(embedded))
    assert want["one"] != want["two"]  # the clones differ, so shared vectors would show

    monkeypatch.setenv("VAULTMEM_CHROMA_URL", chroma_server)
    reports = {name: Cli(root).ok("index") for name, root in clones.items()}
    for name, root in clones.items():
        got = _results(Cli(root))
        for key, expected in want[name].items():
            assert [p for p, _ in got[key]] == [p for p, _ in expected], (name, key)
            assert [s for _, s in got[key]] == pytest.approx([s for _, s in expected], rel=1e-4), (name, key)

    import chromadb

    client = chromadb.HttpClient(host="127.0.0.1", port=int(chroma_server.rsplit(":", 1)[1]))
    collections = {c.name: c for c in client.list_collections()}
    assert len(collections) == 2
    owners = {str(c.metadata.get("clone", "")).rsplit("|", 1)[-1]: c for c in collections.values()}
    assert set(owners) == {str(clones["one"]), str(clones["two"])}
    for name, root in clones.items():
        assert owners[str(root)].count() == reports[name]["embedded_chunks"]
    # an edit in one clone reaches its own collection only
    before_two = _results(Cli(clones["two"]))
    note(clones["one"], "shared/taxes.md", "# Filing taxes\n\nNow about descaling a kettle.\n", title="Filing taxes")
    assert Cli(clones["one"]).ok("index")["updated"] == 1
    assert _results(Cli(clones["two"])) == before_two
