"""Issue 21: tool arguments chosen by an attacker, for every tool, through the SDK's client.

Bob's session sends generated arguments — the internal marker the old server used
(`"\\x00stdin:"`), NUL, leading `-`/`--`, `--ghost=alice`, `--vault=…`, `--body-file=…`,
absolute and `../` paths (to a canary file outside the vault, to alice's notes), alice's
ids, huge strings, nested arrays, unknown names — and after every call and at the end:

- no answer holds anything of alice's (words, ids, paths, titles) or of the canary, other
  than what bob himself sent;
- no call fails with an internal error (a crash is a finding too);
- alice's folders and the folder outside the vault are byte for byte as before, and every
  file the run wrote lies where bob may write.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from tests.conftest import Cli
from tests.mcp.conftest import in_memory
from vaultmem.mcp.arguments import MAX_TEXT
from vaultmem.mcp.tools import TOOLS

SECRET = "zanzibar"
CANARY = "canary-7f3a-outside-the-vault"
ALICE_DIRS = ("private/alice", "diary/alice", "inbox/alice")
# Where bob's session may leave files (his scopes, shared ones, the trash, derived state).
BOB_MAY_WRITE = (
    "shared/",
    "private/bob/",
    "diary/bob/",
    "inbox/bob/",
    "inbox/shared/",
    "project/",
    ".trash/",
    ".vaultmem-journal/bob/",
)


@pytest.fixture(scope="module")
def stage(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A vault where alice keeps secrets, and a canary file beside (outside) it."""
    from vaultmem.services.vaults import init_vault

    base = tmp_path_factory.mktemp("hostile")
    root = base / "vault"
    init_vault(root, ["alice", "bob"])
    config = root / "vaultmem.toml"
    config.write_text(config.read_text().replace('backend = "auto"', 'backend = "none"'))
    outside = base / "outside"
    outside.mkdir()
    (outside / "canary.md").write_text(f"---\ntitle: Canary\n---\n{CANARY}\n")
    cli = Cli(root)
    made = [
        cli.ok("note", "create", "--title", f"{SECRET} plan", "--type", "fact", "--scope", "private",
               "--tag", SECRET, "--body", f"The {SECRET} code is 4471.", ghost="alice"),
        cli.ok("note", "create", "--title", f"{SECRET} diary", "--type", "episode", "--scope", "diary",
               "--body", f"Flew to {SECRET} on the Kestrel-88.", ghost="alice"),
        cli.ok("capture", f"{SECRET} raw thought about Quokka-51", ghost="alice"),
    ]  # fmt: skip
    cli.ok(
        "note", "create", "--title", "Harbour", "--type", "fact", "--scope", "shared", "--body", "Public tide table."
    )
    yield {"root": root, "outside": outside, "alice": made}


def _snapshot(folder: Path) -> dict[str, str]:
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _hostile_strings(stage: dict[str, Any]) -> list[str]:
    outside = stage["outside"]
    alice = stage["alice"]
    return [
        "\x00stdin:",
        "\x00stdin:--ghost=alice",
        "\x00",
        "--ghost=alice",
        "--ghost",
        "alice",
        "--vault=/",
        f"--vault={outside}",
        "--vault",
        "--body-file=/etc/passwd",
        f"--body-file={outside / 'canary.md'}",
        "--body-file",
        "--json",
        "-",
        "--",
        "-x",
        "=",
        "a=b",
        "--set=owner=alice",
        "/etc/passwd",
        str(outside / "canary.md"),
        "../outside/canary.md",
        "../../outside/canary.md",
        "../private/alice",
        "private/alice/" + Path(alice[0]["path"]).name,
        "Private/Alice/" + Path(alice[0]["path"]).name,
        alice[0]["path"],
        alice[0]["id"],
        alice[0]["id"][:8],
        alice[1]["id"],
        alice[2]["path"],
        f"{SECRET} plan",
        f"[[{SECRET} plan]]",
        "\n---\nowner: alice\nscope: private\n---\n",
        "$(cat /etc/passwd)",
        "Harbour",
        "x" * 5000,
    ]


HUGE = "y" * (MAX_TEXT + 1)


def _values(strings: list[str]) -> st.SearchStrategy[Any]:
    text = st.sampled_from(strings) | st.text(max_size=30) | st.just(HUGE)
    scalars = text | st.integers(-(2**60), 2**60) | st.floats(allow_nan=True) | st.booleans() | st.none()
    return st.recursive(
        scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=6
    )


def _typed(schema: dict[str, Any], strings: list[str]) -> st.SearchStrategy[Any]:
    """A value of the schema's type, drawn from the hostile pool where it is text."""
    text = st.sampled_from(strings)
    if "enum" in schema:
        return st.sampled_from(schema["enum"]) | text
    kind = schema.get("type")
    if kind == "string":
        return text
    if kind == "integer":
        return st.integers(-3, 3) | st.integers()
    if kind == "number":
        return st.floats(-1, 2) | st.floats(allow_nan=True)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        item = schema.get("items", {})
        if item.get("type") == "object":
            return st.lists(st.dictionaries(text | st.sampled_from(["type", "content"]), text, max_size=4), max_size=3)
        return st.lists(text, max_size=4)
    if kind == "object" and "properties" in schema:
        return st.fixed_dictionaries({}, optional={k: _typed(v, strings) for k, v in schema["properties"].items()})
    return st.dictionaries(text, text | st.lists(text, max_size=2), max_size=3)


def _arguments(tool: Any, strings: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    typed = st.fixed_dictionaries({}, optional={k: _typed(v, strings) for k, v in tool.properties.items()})
    names = [*tool.properties, *tool.aliases, "ghost", "vault", "--ghost", "body_file", "as_ghost", "validated_by"]
    loose = st.dictionaries(st.sampled_from(names), _values(strings), max_size=4)
    return st.one_of(typed, typed, typed, loose)


def _sent(value: Any) -> Iterator[str]:
    """Every string in what bob sent (keys too): it may come back to him in errors."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _sent(v)
    elif isinstance(value, list):
        for v in value:
            yield from _sent(v)


def _calls(strings: list[str]) -> st.SearchStrategy[list[tuple[str, dict[str, Any]]]]:
    one = st.one_of(*[st.tuples(st.just(t.name), _arguments(t, strings)) for t in TOOLS])
    return st.lists(one, min_size=1, max_size=6)


def test_bob_with_hostile_arguments_sees_and_writes_only_his_own(stage: dict[str, Any]) -> None:
    root, outside = stage["root"], stage["outside"]
    strings = _hostile_strings(stage)
    # What only alice's notes (and the canary, and /etc/passwd) hold: forbidden in every answer.
    hidden = ["4471", "Kestrel-88", "Quokka-51", CANARY, "root:x:0:0"]
    # What bob may name himself (he guesses ids and paths): forbidden unless this call sent it.
    named = [*(n["id"] for n in stage["alice"]), *(n["path"] for n in stage["alice"])]
    # Alice's word: forbidden until bob has used it himself (his own notes may then hold it).
    said_ever: list[str] = []
    before = {d: _snapshot(root / d) for d in ALICE_DIRS}
    outside_before = _snapshot(outside)
    vault_before = set(_snapshot(root))
    calls_run = [0]

    @settings(
        max_examples=40,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure prints at once
        suppress_health_check=list(HealthCheck),
    )
    @given(_calls(strings))
    @example(INJECTIONS)  # the landed attacks, whatever the generator draws
    def attack(calls: list[tuple[str, dict[str, Any]]]) -> None:
        async def bob(client: Any) -> None:
            for name, args in calls:
                result = await client.call_tool(name, args)
                calls_run[0] += 1
                text = result.content[0].text + json.dumps(result.structured_content or {}, ensure_ascii=False)
                if result.is_error:
                    code = json.loads(result.content[0].text)["error"]["code"]
                    assert code != "internal", (name, args, text[:500])
                sent = sorted({v for v in _sent(args) if v}, key=len, reverse=True)
                for value in sent:
                    text = text.replace(value, "")
                said = " ".join(sent).lower()
                said_ever.append(said)
                words = [w for w in named if w.lower() not in said]
                if not any(SECRET in text for text in said_ever):
                    words.append(SECRET)
                for word in hidden + words:
                    at = text.find(word)
                    assert at < 0, (name, str(args)[:300], word, text[max(0, at - 300) : at + 100])

        in_memory(root, "bob", bob)

    attack()
    assert calls_run[0] >= 40
    for d in ALICE_DIRS:
        assert _snapshot(root / d) == before[d], f"{d} changed"
    assert _snapshot(outside) == outside_before
    for rel in set(_snapshot(root)) - vault_before:
        assert rel.startswith(BOB_MAY_WRITE) or rel.startswith(".vaultmem/"), rel
        assert not rel.startswith(".trash/") or "/alice/" not in rel, rel


def test_the_four_injections_of_the_issue_act_as_bob(stage: dict[str, Any]) -> None:
    """The landed attacks, verbatim: each is bob's own view or invalid_input, and nothing
    of alice's moves."""
    root = stage["root"]
    before = {d: _snapshot(root / d) for d in ALICE_DIRS}
    alice_text = (root / stage["alice"][0]["path"]).read_text()
    answers: list[Any] = []

    async def bob(client: Any) -> None:
        saved: dict[str, Any] = {}
        for name, args in INJECTIONS:
            if name == "memory_note_update" and saved:
                args = {**args, "note_id": saved["id"]}  # the note bob just saved, by id
            result = await client.call_tool(name, args)
            if name == "memory_save" and not result.is_error:
                saved.update(result.structured_content)
            answers.append((name, result))

    in_memory(root, "bob", bob)
    for name, result in answers:
        text = result.content[0].text + json.dumps(result.structured_content or {})
        assert "4471" not in text and "Kestrel" not in text and "root:x" not in text, (name, text)
        if result.is_error:
            assert json.loads(result.content[0].text)["error"]["code"] == "invalid_input", (name, text)
        elif name == "memory_query":
            assert result.structured_content["matches"] == []
        else:
            assert result.structured_content["path"].startswith("private/bob/"), (name, text)
    for d in ALICE_DIRS:
        assert _snapshot(root / d) == before[d]
    assert (root / stage["alice"][0]["path"]).read_text() == alice_text


INJECTIONS: list[tuple[str, dict[str, Any]]] = [
    ("memory_query", {"query": SECRET, "types": ["fact", "\x00stdin:"], "memory_type": "--ghost=alice"}),
    ("memory_save", {"content": "bob's fact", "tags": ["\x00stdin:", "--ghost=alice"]}),
    ("memory_note_update", {"note_id": "bob's fact", "add_tags": ["\x00stdin:", "--body-file=/etc/passwd"]}),
    ("memory_query", {"query": SECRET, "types": ["\x00stdin:"], "memory_type": "--vault=/"}),
]
