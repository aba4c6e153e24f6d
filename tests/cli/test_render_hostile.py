"""Issue 9 (5): note text is data. Every human renderer prints hostile titles, bodies, tags
and paths literally, with terminal escape sequences neutralised, and never crashes.

Each command runs three ways: through a pipe (records), on a forced terminal without
styles (TERM=dumb: any ESC in the output came from a note) and on a forced colour terminal
(every ESC must be one of rich's own SGR styles, never an OSC or a note's sequence).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cli._util import write
from tests.conftest import Cli
from vaultmem.cli.output import clean, flat

# Markup-like text, rich's and markdown's, and everything that steers a terminal.
HOSTILE = [
    "[/]",
    "[red]x[/red]",
    "[draft]",
    "x[i]",
    "[link](x)",
    "[bold blink]boo",
    ":smile: @click",
    "\x1b[31mred\x1b[0m",
    "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "\x1b]0;pwned title\x07",
    "\x1b[2J\x1b[H",
    "car\rriage",
    "nul\x00byte",
    "del\x7f c1\x9b31m",
    "rtl \u202etxt.exe",
    "isolate \u2066x\u2069",
    "line\u2028sep",
]
# Characters that must never reach the user's terminal raw (newline and tab are layout).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
SGR = re.compile("\x1b\\[[0-9;]*m")


def _yaml(text: str) -> str:
    """A YAML double-quoted scalar holding `text` exactly (json escapes are valid YAML)."""
    return json.dumps(text, ensure_ascii=True)


def _file_part(text: str) -> str:
    # No "/" or NUL in a file name; no "\\" either (vault/store.py refuses such paths).
    return text.replace("/", "_").replace("\x00", "0").replace("\\", "_")


@pytest.fixture
def hostile(vault: Path, cli: Cli) -> dict[str, Any]:
    """One shared note per hostile string (in its title, tag, body and file name), a topic
    note, an inbox capture, a binary file and a broken note with hostile names."""
    for i, h in enumerate(HOSTILE):
        body = f"zebra {i} {h}\n- [/] half done\n[red]x[/red] and x[i] [link](x) {h}\n"
        if "\x00" in h:  # a NUL in the body makes the file binary: keep it to the title
            body = body.replace("\x00", "")
        write(
            vault,
            f"shared/Hostile {i} {_file_part(h)}.md",
            f"---\ntitle: {_yaml(f'H{i} {h}')}\ntags: [{_yaml(f'tag{i}{h}')}]\n---\n{body}",
        )
    write(vault, "shared/Garden tasks [draft].md", "---\nid: GARDEN\n---\nzebra crossing\n- [/] half done\n")
    write(
        vault,
        "shared/topic [red]x[/red].md",
        '---\ntitle: Zebra topic [red]x[/red]\ntype: topic\nsummary: "stripes \\e[31m [/]"\n'
        "files: ['shared/*.md']\n---\n",
    )
    write(vault, "shared/bin \x1b[31m[red].md", b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)))
    write(vault, "shared/broken \u202e[draft].md", "---\ntitle: [oops\n---\nzebra\n")
    cli.ok("capture", "zebra capture \x1b[31m [/] x[i] \u202e", ghost="alice")
    write(
        vault, "inbox/alice/cap \x1b[31m [/].md", '---\ntitle: "cap \\e[31m [/] \\u202e"\ntype: capture\n---\nzebra\n'
    )
    cli.ok("index")
    return {"notes": cli.ok("query", "zebra", "--limit", "100", "--min-relevance", "0")["matches"]}


def _commands(hostile: dict[str, Any]) -> list[list[str]]:
    first = next(n["id"] for n in hostile["notes"] if n["path"].startswith("shared/Hostile 8 "))
    return [
        ["search", "zebra", "--limit", "50", "--mode", "bm25"],
        ["search", "zebra", "--limit", "5", "--mode", "bm25", "--explain"],
        ["search", "half done", "--mode", "bm25", "--graph-depth", "2"],
        ["query", "zebra", "--limit", "100", "--min-relevance", "0"],
        ["reference", "search", "zebra topic", "half done"],
        ["inbox", "list"],
        ["lint"],
        ["status"],
        ["index"],
        ["ghost", "list"],
        ["get", first],
        ["get", "GARDEN"],
    ]


def _run(cli: Cli, args: list[str], strip: bool = False) -> tuple[int, str, str]:
    """Exit code, stdout, stderr of a human-mode run (`strip`: without rich's own styles)."""
    res = cli(*args, ghost="alice", json_=False)
    assert "Traceback" not in res.stderr, (args, res.stderr)
    return res.exit_code, SGR.sub("", res.stdout) if strip else res.stdout, res.stderr


def _expected_exit(cli: Cli, args: list[str]) -> int:
    return 1 if args[0] == "lint" else 0  # lint exits 1 when it finds errors (the binary file)


def _assert_neutral(text: str, where: str, colour: bool = False) -> None:
    if colour:
        assert "\x1b]" not in text, f"{where}: an OSC sequence reached the terminal"
        text = SGR.sub("", text)
    bad = RAW.findall(text)
    assert not bad, f"{where}: raw control characters {bad!r} in {text!r}"


MODES = {
    "pipe": {},
    "terminal": {"FORCE_COLOR": "1", "TERM": "dumb", "COLUMNS": "400"},
    "colour": {"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "400"},
}


@pytest.mark.parametrize("mode", list(MODES))
def test_every_renderer_prints_hostile_text_literally(
    cli: Cli, hostile: dict[str, Any], mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in MODES[mode].items():
        monkeypatch.setenv(name, value)
    for args in _commands(hostile):
        code, out, err = _run(cli, args)
        assert code == _expected_exit(cli, args), (args, err)
        _assert_neutral(out, f"{mode} stdout of {args}", colour=mode == "colour")
        _assert_neutral(err, f"{mode} stderr of {args}")
        if mode == "terminal":
            assert "\x1b" not in out, args


@pytest.mark.parametrize("mode", ["pipe", "colour"])
def test_titles_paths_and_tags_show_exactly(
    cli: Cli, hostile: dict[str, Any], mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in MODES[mode].items():
        monkeypatch.setenv(name, value)
    found = cli.ok("search", "zebra", "--limit", "50", "--mode", "bm25", ghost="alice")["results"]
    assert len(found) >= len(HOSTILE)
    _, shown, _ = _run(cli, ["search", "zebra", "--limit", "50", "--mode", "bm25"], strip=True)
    _, queried, _ = _run(cli, ["query", "zebra", "--limit", "100", "--min-relevance", "0"], strip=True)
    for result in found:
        s = result["summary"]
        for text in (shown, queried):
            assert clean(s["title"], inline=True) in text
            assert clean(s["path"], inline=True) in text
    assert "shared/Garden tasks [draft].md" in shown  # the path that exists, not "shared/Garden tasks .md"
    for note in [n for n in hostile["notes"] if n["path"].startswith("shared/Hostile")]:
        doc = cli.ok("get", note["id"], ghost="alice")
        _, got, _ = _run(cli, ["get", note["id"]], strip=True)
        assert clean(doc["note"]["title"], inline=True) in got
        assert clean(doc["note"]["path"], inline=True) in got
        for tag in doc["tags"]:
            assert clean(tag, inline=True) in got
        assert "[/] half done" in got
        assert "x[i]" in got and "[red]x[/red]" in got
    _, got, _ = _run(cli, ["get", "GARDEN"], strip=True)
    assert "shared/Garden tasks [draft].md" in got and "[/] half done" in got


def test_escape_sequences_print_as_visible_escapes(cli: Cli, hostile: dict[str, Any]) -> None:
    _, out, _ = _run(cli, ["search", "zebra", "--limit", "50", "--mode", "bm25"])
    for visible in ("\\x1b[31mred\\x1b[0m", "\\x1b]0;pwned title\\x07", "car\\rriage", "nul\\x00byte", "\\u202etxt"):
        assert visible in out, visible
    _, lint, _ = _run(cli, ["lint"])
    assert "shared/bin \\x1b[31m[red].md" in lint and "shared/broken \\u202e[draft].md" in lint
    _, inbox, _ = _run(cli, ["inbox", "list"])
    assert "cap \\x1b[31m [/] \\u202e\tinbox/alice/cap \\x1b[31m [/].md" in inbox


def test_json_output_is_unchanged(cli: Cli, hostile: dict[str, Any]) -> None:
    """--json keeps note text exactly; JSON escaping is what makes it safe there."""
    data = cli.ok("search", "zebra", "--limit", "50", "--mode", "bm25", ghost="alice")
    titles = {r["summary"]["title"] for r in data["results"]}
    assert "H7 \x1b[31mred\x1b[0m" in titles and "H0 [/]" in titles
    doc = cli.ok("get", "GARDEN", ghost="alice")
    assert doc["note"]["path"] == "shared/Garden tasks [draft].md"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("[/] [red]x[/red] x[i] [link](x)", "[/] [red]x[/red] x[i] [link](x)"),
        ("a\x1b[31mb", "a\\x1b[31mb"),
        ("\x1b]8;;u\x07l", "\\x1b]8;;u\\x07l"),
        ("a\r\nb\rc", "a\nb\\rc"),
        ("nul\x00 del\x7f c1\x85", "nul\\x00 del\\x7f c1\\x85"),
        ("\u202eevil\u2066\u2069", "\\u202eevil\\u2066\\u2069"),
        ("tab\tnew\nline", "tab\tnew\nline"),
        ("Café ☕ 日本", "Café ☕ 日本"),
        ("C\u200bT\u200e\u200f\u061c\u2060\ufeff", "C\\u200bT\\u200e\\u200f\\u061c\\u2060\\ufeff"),  # hide or reorder
        ("می\u200cخواهم 👨\u200d👩", "می\u200cخواهم 👨\u200d👩"),  # joiners a script and emoji need
    ],
)
def test_clean(text: str, shown: str) -> None:
    assert clean(text) == shown
    assert "\n" not in clean(text, inline=True) and "\t" not in clean(text, inline=True)
    assert clean(clean(text)) == clean(text)
    assert not RAW.search(clean(text, inline=True))
    assert "\n" not in flat(text)


def test_clean_inline_escapes_layout() -> None:
    assert clean("a\tb\nc", inline=True) == "a\\tb\\nc"
    assert clean(None) == "" and clean(0.5) == "0.5"


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ("run &#x202e;txt.exe", "run &amp;#x202e;txt.exe"),  # would become U+202E in Markdown
        ("&rlm;&#8203;&#x1b;[2J&lrm;", "&amp;rlm;&amp;#8203;&amp;#x1b;[2J&amp;lrm;"),
        ("fish &amp; chips &eacute; &#65; &unknownname;", "fish &amp; chips &eacute; &#65; &unknownname;"),
        ("a\x1b[31m", "a\\x1b[31m"),
    ],
)
def test_markdown_text_keeps_character_references_that_would_bring_controls_back(body: str, shown: str) -> None:
    from vaultmem.cli.output import markdown_text

    assert markdown_text(body) == shown


def test_notices_and_errors_stay_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A newline in a file name a message names must not print as a line of its own."""
    from vaultmem.cli.output import error, notice

    notice("moved shared/A\nwarning: FORGED.md")
    error("not_found", "no note shared/B\nvaultmem: error: FORGED.md", json_mode=False)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "moved shared/A\\nwarning: FORGED.md",
        "vaultmem: error: no note shared/B\\nvaultmem: error: FORGED.md",
    ]


def test_the_watchers_log_shows_note_text_as_data() -> None:
    """`watch` in the foreground and `tail -f watcher.log` show file names and config keys."""
    import logging

    from vaultmem.daemon.runner import _Shown

    record = logging.LogRecord("vaultmem.daemon", logging.WARNING, __file__, 1,
                               "vaultmem.toml: unknown key watch.k\x1b]8;;http://evil/\x07\x1b[2J", None, None)  # fmt: skip
    shown = _Shown("vaultmem watch: %(message)s").format(record)
    assert shown == "vaultmem watch: vaultmem.toml: unknown key watch.k\\x1b]8;;http://evil/\\x07\\x1b[2J"
