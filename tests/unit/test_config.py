"""Configuration: parsing vaultmem.toml tolerantly, and flags > env > toml > defaults."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from vaultmem.config import (
    DEFAULT_TYPES,
    SearchDefaults,
    add_ghost_to_config_text,
    apply_environment,
    find_vault,
    load_config,
    parse_config,
    validate_ghost_name,
)
from vaultmem.errors import InvalidInput, VaultNotFound
from vaultmem.services.app import App


def test_defaults() -> None:
    config = parse_config({})
    assert config.ghosts == ()
    assert config.types == DEFAULT_TYPES
    assert config.search == SearchDefaults()
    assert (config.embedding_backend, config.chroma_mode, config.chroma_url) == ("auto", "embedded", None)
    assert config.warnings == ()


def test_template_config_parses_without_warnings() -> None:
    from vaultmem.services.vaults import template_root

    text = template_root().joinpath("vaultmem.toml").read_text(encoding="utf-8")
    config = parse_config(tomllib.loads(text))
    assert config.warnings == ()
    assert config.projects == {"example": None}
    assert config.search == SearchDefaults()


def test_the_template_comments_out_the_defaults() -> None:
    """A commented setting of the template says what the default is: uncommenting it changes
    nothing (the examples of a list or a server's url aside), and the cut it names is the one
    search applies without it (it once said 0.01, the default being 0.008)."""
    import re

    from vaultmem.search.fusion import RECOMMENDED_MIN_SCORE
    from vaultmem.services.vaults import template_root

    text = template_root().joinpath("vaultmem.toml").read_text(encoding="utf-8")
    examples = ("people", "members", "url", "allowed_hosts", "allowed_origins")
    setting = re.compile(r"^# ([a-z_]+) = ", re.M)
    assert {m.group(1) for m in setting.finditer(text)} > {"min_score", "idle_exit_minutes", "precision"}
    uncommented = setting.sub(lambda m: m.group(0) if m.group(1) in examples else f"{m.group(1)} = ", text)
    as_is, stated = parse_config(tomllib.loads(text)), parse_config(tomllib.loads(uncommented))
    assert stated.warnings == ()
    assert stated.search.min_score == RECOMMENDED_MIN_SCORE
    assert as_is.search.min_score is None  # None: search applies RECOMMENDED_MIN_SCORE
    assert replace(stated, search=replace(stated.search, min_score=None)) == as_is


def test_full_config() -> None:
    config = parse_config(
        tomllib.loads(
            """
[vault]
ghosts = ["alice", "bob"]
types = ["note", "fact"]
[projects.open]
[projects.closed]
members = ["alice"]
[memory_types]
semantic = ["fact"]
custom = ["note"]
[search]
max_results = 5
bm25_weight = 2
rrf_k = 30.0
trust_bias = 0.5
[embedding]
backend = "none"
model = "m"
[chroma]
mode = "http"
url = "http://127.0.0.1:8000"
"""
        )
    )
    assert config.ghosts == ("alice", "bob")
    assert config.types == ("note", "fact")
    assert config.projects == {"open": None, "closed": ("alice",)}
    assert config.memory_types["semantic"] == ("fact",)
    assert config.memory_types["custom"] == ("note",)
    assert config.memory_types["episodic"] == ("episode", "observation")  # defaults kept
    assert config.search == SearchDefaults(max_results=5, bm25_weight=2.0, rrf_k=30, trust_bias=0.5)
    assert isinstance(config.search.bm25_weight, float) and isinstance(config.search.rrf_k, int)
    assert (config.embedding_backend, config.embedding_model) == ("none", "m")
    assert (config.chroma_mode, config.chroma_url) == ("http", "http://127.0.0.1:8000")
    assert config.warnings == ()


@pytest.mark.parametrize(
    ("toml", "warning", "check"),
    [
        ("x = 1", "unknown section [x]", None),
        ("[vault]\nfoo = 1", "unknown key vault.foo", None),
        ("[search]\nbogus = 1", "unknown key search.bogus", None),
        ("vault = 1", "[vault]", ("ghosts", ())),
        ("projects = 1", "[projects]", ("projects", {})),
        ("embedding = 3", "[embedding]", ("embedding_backend", "auto")),
        ("chroma = 'x'", "[chroma]", ("chroma_mode", "embedded")),
        ("memory_types = [1]", "[memory_types]", None),
        ("search = 'x'", "[search]", ("search", SearchDefaults())),
        ("[vault]\nghosts = 'alice'", "vault.ghosts", ("ghosts", ())),
        ("[vault]\nghosts = ['Alice', 'ok', '../x']", "'../x'", ("ghosts", ("ok",))),
        ("[vault]\ntypes = [1, 2]", "vault.types", ("types", DEFAULT_TYPES)),
        ("[projects.a]\nmembers = 'alice'", "projects.a.members", ("projects", {"a": ()})),
        ("[memory_types]\nx = 1", "memory_types.x", None),
        ("[search]\nrrf_k = 'abc'", "search.rrf_k", ("search", SearchDefaults())),
        ("[search]\nrrf_k = 1.7", "search.rrf_k", ("search", SearchDefaults())),
        ("[search]\nmax_results = true", "search.max_results", ("search", SearchDefaults())),
        ("[search]\nbm25_weight = nan", "search.bm25_weight", ("search", SearchDefaults())),
        # out of the range a search takes: every search failed, naming a flag never passed
        (
            "[search]\nmax_results = -5",
            "search.max_results: expected a number from 1 to 200",
            ("search", SearchDefaults()),
        ),
        ("[search]\nmax_results = 201", "search.max_results", ("search", SearchDefaults())),
        ("[search]\nrrf_k = -60", "search.rrf_k: expected a number above 0", ("search", SearchDefaults())),
        ("[search]\nrrf_k = 0", "search.rrf_k", ("search", SearchDefaults())),
        ("[search]\ngraph_depth = 1000000", "search.graph_depth", ("search", SearchDefaults())),
        ("[search]\nbm25_weight = '2'", "search.bm25_weight", ("search", SearchDefaults())),
        ("[embedding]\nbackend = 'gpu'", "embedding.backend", ("embedding_backend", "auto")),
        ("[embedding]\nbackend = 5", "embedding.backend", ("embedding_backend", "auto")),
        ("[embedding]\nprecision = 'int4'", "embedding.precision", ("embedding_precision", "float32")),
        ("[embedding]\nprecision = 8", "embedding.precision", ("embedding_precision", "float32")),
        ("[chroma]\nmode = 'cloud'", "chroma.mode", ("chroma_mode", "embedded")),
        ("[chroma]\nurl = 5", "chroma.url", ("chroma_url", None)),
    ],
)
def test_bad_config_warns_never_crashes(toml: str, warning: str, check: tuple[str, Any] | None) -> None:
    config = parse_config(tomllib.loads(toml))
    assert any(warning in w for w in config.warnings), config.warnings
    if check is not None:
        assert getattr(config, check[0]) == check[1]


@pytest.mark.parametrize(
    ("env", "backend", "model", "mode", "url"),
    [
        ({}, "none", "toml-model", "embedded", None),
        ({"VAULTMEM_EMBEDDING_BACKEND": "onnx"}, "onnx", "toml-model", "embedded", None),
        ({"VAULTMEM_EMBEDDING_MODEL": "env-model"}, "none", "env-model", "embedded", None),
        ({"VAULTMEM_CHROMA_URL": "http://h:1"}, "none", "toml-model", "http", "http://h:1"),
        ({"VAULTMEM_EMBEDDING_BACKEND": ""}, "none", "toml-model", "embedded", None),
    ],
)
def test_environment_overrides_toml(env: dict[str, str], backend: str, model: str, mode: str, url: str | None) -> None:
    config = apply_environment(parse_config({"embedding": {"backend": "none", "model": "toml-model"}}), env)
    assert (config.embedding_backend, config.embedding_model, config.chroma_mode, config.chroma_url) == (
        backend,
        model,
        mode,
        url,
    )


def test_bad_environment_backend_is_invalid_input() -> None:
    with pytest.raises(InvalidInput):
        apply_environment(parse_config({}), {"VAULTMEM_EMBEDDING_BACKEND": "gpu"})


def test_embedding_precision_from_toml_and_environment() -> None:
    assert parse_config({}).embedding_precision == "float32"
    toml = parse_config({"embedding": {"precision": "int8"}})
    assert toml.embedding_precision == "int8" and not toml.warnings
    assert apply_environment(toml, {"VAULTMEM_EMBEDDING_PRECISION": "float32"}).embedding_precision == "float32"
    assert apply_environment(parse_config({}), {"VAULTMEM_EMBEDDING_PRECISION": "int8"}).embedding_precision == "int8"
    with pytest.raises(InvalidInput):
        apply_environment(parse_config({}), {"VAULTMEM_EMBEDDING_PRECISION": "fp16"})


def test_the_fingerprint_names_a_precision_other_than_float32() -> None:
    from vaultmem.index.embedder import fingerprint

    plain = fingerprint("sentence-transformers", "all-MiniLM-L6-v2", 384, "c4")
    assert plain == "sentence-transformers|all-MiniLM-L6-v2|384|c4"  # unchanged: no re-embedding on upgrade
    assert fingerprint("sentence-transformers", "all-MiniLM-L6-v2", 384, "c4", "float32") == plain
    assert fingerprint("sentence-transformers", "all-MiniLM-L6-v2", 384, "c4", "int8") == plain + "|int8"


# --- vault discovery and ghosts: flags > env > toml ----------------------------------------


def _vault(path: Path, ghosts: str = '"alice", "bob"') -> Path:
    path.mkdir(parents=True)
    (path / "vaultmem.toml").write_text(f"[vault]\nghosts = [{ghosts}]\n")
    return path


def test_find_vault_precedence(tmp_path: Path) -> None:
    flag, env, cwd = _vault(tmp_path / "flag"), _vault(tmp_path / "env"), _vault(tmp_path / "cwd")
    deep = cwd / "a" / "b"
    deep.mkdir(parents=True)
    environ = {"VAULTMEM_VAULT": str(env)}
    assert find_vault(flag, cwd=deep, env=environ) == flag.resolve()
    assert find_vault(None, cwd=deep, env=environ) == env.resolve()
    assert find_vault(None, cwd=deep, env={}) == cwd.resolve()


def test_find_vault_errors(tmp_path: Path) -> None:
    with pytest.raises(VaultNotFound):
        find_vault(tmp_path, env={})
    with pytest.raises(VaultNotFound):
        find_vault(None, cwd=tmp_path, env={"VAULTMEM_VAULT": str(tmp_path / "nope")})
    with pytest.raises(VaultNotFound):
        find_vault(None, cwd=tmp_path, env={})


def test_app_open_precedence(tmp_path: Path) -> None:
    flag, env = _vault(tmp_path / "flag"), _vault(tmp_path / "env")
    environ = {"VAULTMEM_VAULT": str(env), "VAULTMEM_GHOST": "bob", "VAULTMEM_EMBEDDING_BACKEND": "none"}
    app = App.open(flag, "alice", env=environ)
    assert (app.root, app.ghost, app.config.embedding_backend) == (flag.resolve(), "alice", "none")
    app = App.open(None, None, env=environ)
    assert (app.root, app.ghost) == (env.resolve(), "bob")


@pytest.mark.parametrize("ghost", ["../bob", "Bob", "", "a" * 65, "-x", "a b", "a/b", "x\x00"])
def test_invalid_ghost_names(ghost: str) -> None:
    with pytest.raises(InvalidInput):
        validate_ghost_name(ghost)


@pytest.mark.parametrize("ghost", ["a", "alice", "gpt-4_x", "0", "a" * 64])
def test_valid_ghost_names(ghost: str) -> None:
    assert validate_ghost_name(ghost) == ghost


def test_app_open_refuses_unknown_or_invalid_ghost(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    with pytest.raises(InvalidInput):
        App.open(root, "carol", env={})
    with pytest.raises(InvalidInput):
        App.open(root, "../bob", env={})
    with pytest.raises(InvalidInput):
        App.open(root, None, env={"VAULTMEM_GHOST": "../bob"})


def test_load_config_errors(tmp_path: Path) -> None:
    with pytest.raises(VaultNotFound):
        load_config(tmp_path, env={})
    (tmp_path / "vaultmem.toml").write_text("[vault\n")
    with pytest.raises(InvalidInput):
        load_config(tmp_path, env={})
    (tmp_path / "vaultmem.toml").write_bytes(b"x = '\xff'\n")
    with pytest.raises(InvalidInput):
        load_config(tmp_path, env={})


@pytest.mark.parametrize(
    ("text", "expected_ghosts"),
    [
        ("[vault]\nghosts = []\n", ["carol"]),
        ('[vault]\nghosts = ["alice"]  # who\n', ["alice", "carol"]),
        ('[vault]\nghosts = [\n  "alice",\n  "bob",\n]\ntypes = ["note"]\n', ["alice", "bob", "carol"]),
        ('[vault]\ntypes = ["note"]\n', ["carol"]),
        ('# ghosts = ["x"]\n[search]\nrrf_k = 60\n', ["carol"]),
        ('[search]\nrrf_k = 60\n[vault]\nghosts = ["a"]\n[chroma]\nmode = "embedded"\n', ["a", "carol"]),
    ],
)
def test_add_ghost_to_config_text(text: str, expected_ghosts: list[str]) -> None:
    out = add_ghost_to_config_text(text, "carol")
    config = parse_config(tomllib.loads(out))
    assert list(config.ghosts) == expected_ghosts
    assert config.warnings == ()
    # everything else, comments included, is still there
    for line in text.splitlines():
        if not line.startswith("ghosts") and not line.startswith('  "') and line not in ("]",):
            assert line in out
