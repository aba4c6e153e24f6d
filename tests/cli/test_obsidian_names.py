"""Issue 9.2: notes vaultmem creates are named as Obsidian names files, so every wikilink
resolves to the same note by file name alone (Obsidian's rule) and in vaultmem."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

import pytest

from tests.conftest import Cli

# Titles as agents type them: spaces, capitals, characters Obsidian forbids in file names,
# other scripts, and duplicates (same title in other folders; titles that name one file).
TITLES: list[tuple[str, str]] = [
    ("Wine basics", "shared"),
    ("Wine: basics", "shared"),  # the same file name as "Wine basics" once ":" is dropped
    ("A/B testing", "shared"),
    ("C# tips", "shared"),
    ("Why? Because!", "shared"),
    ("Garden tasks [draft]", "shared"),
    ("日本語のノート", "shared"),
    ("Заметка о вине", "shared"),
    ("ملاحظة", "shared"),
    ("MiXeD CaSe Title", "shared"),
    ("Wine basics", "private"),  # a duplicate of a shared title, in alice's folder
    ("Plan", "private"),
    ("plan", "diary"),
    ("Plan", "project"),
]

WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]*?)\]\]")


def _obsidian_target(inner: str) -> str:
    """The link path Obsidian reads from the inside of `[[…]]`."""
    target = re.split(r"\\?\|", inner, maxsplit=1)[0]
    return target.split("#", 1)[0].strip()


def _obsidian_resolve(target: str, source: str, files: list[str]) -> str | None:
    """Obsidian's rule: a vault path, else a file name (case-insensitive); several files of
    that name: the one in the linking note's folder, else the shortest path."""
    low = target.lower()
    low = low[:-3] if low.endswith(".md") else low
    by_path = [f for f in files if f[:-3].lower() == low]
    if by_path:
        return by_path[0]
    named = [f for f in files if posixpath.basename(f)[:-3].lower() == low]
    if not named:
        return None
    here = posixpath.dirname(source)
    local = sorted(f for f in named if posixpath.dirname(f) == here)
    return local[0] if local else min(named, key=lambda f: (len(f), f))


def _create(cli: Cli, title: str, scope: str, body: str) -> dict[str, object]:
    extra = ["--project", "example"] if scope == "project" else []
    return cli.ok(
        "note", "create", "--title", title, "--type", "note", "--scope", scope, *extra, "--body", body, ghost="alice"
    )  # fmt: skip


def test_every_wikilink_resolves_by_file_name_to_vaultmems_note(vault: Path, cli: Cli) -> None:
    made = []
    for title, scope in TITLES:
        made.append((_create(cli, title, scope, f"About {title}."), title))
    names = {str(m["path"]).rsplit("/", 1)[-1] for m, _ in made}
    assert "Wine basics.md" in names and "Wine basics 1.md" in names  # numbered as Obsidian does
    assert {"A B testing.md", "C tips.md", "Why Because!.md", "Garden tasks draft.md", "日本語のノート.md"} <= names
    shared_titles = [t for t, s in TITLES if s == "shared"]
    # Links as an agent writes them: by title (also one that is not a valid file name), with
    # headings, labels, embeds, in a table, by alias and by id.
    alias_note = _create(cli, "Aliased note", "shared", "Target of an alias.")
    cli.ok("note", "update", str(alias_note["id"]), "--set", "aliases=[Nickname]", ghost="alice")
    body = "\n".join(
        [
            *(f"- [[{t}]] and [[{t}#Part|label]] and ![[{t}]]" for t in shared_titles if "#" not in t),
            "| col | link |",
            "|---|---|",
            "| x | [[Wine: basics]] |",
            "By alias: [[Nickname]]; by id: [[" + str(made[0][0]["id"]) + "]].",
            "Mine: [[Plan]] and [[Wine basics]].",
        ]
    )
    hub = _create(cli, "Hub of links", "private", body)
    cli.ok("note", "update", str(made[1][0]["id"]), "--append", "See also [[A/B testing]] and [[Plan]].", ghost="alice")
    # Every wikilink in the vault, as written in the files.
    files = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if ".vaultmem" not in p.parts)
    checked = 0
    for source in files:
        if not source.startswith(("shared/", "private/alice/", "project/", "diary/alice/")):
            continue
        text = (vault / source).read_text(encoding="utf-8")
        doc = cli.ok("get", source, ghost="alice")
        ours = {(link["path"]) for link in doc["links"]["out"]}
        assert not doc["links"]["dangling"], f"{source}: {doc['links']['dangling']}"
        prose = re.sub(r"`[^`\n]*`", "", text.split("---\n", 2)[-1])  # links in code are text
        for m in WIKILINK.finditer(prose):
            target = _obsidian_target(m.group(2))
            theirs = _obsidian_resolve(target, source, files)
            assert theirs is not None, f"{source}: [[{m.group(2)}]] does not resolve by file name"
            assert theirs in ours, f"{source}: [[{m.group(2)}]] is {theirs} in Obsidian, not in {sorted(ours)}"
            checked += 1
    assert checked >= 30
    hub_text = (vault / str(hub["path"])).read_text(encoding="utf-8")
    # Rewritten to the vault path (a bare file name could be shared by a note this ghost
    # cannot see), the shown text kept, the table intact.
    assert "| x | [[shared/Wine basics 1\\|Wine: basics]] |" in hub_text
    assert "[[shared/Aliased note|Nickname]]" in hub_text
    assert "[[Plan]]" in hub_text  # already a file name in alice's folder: left as written


def test_template_links_resolve_by_file_name(vault: Path, cli: Cli) -> None:
    welcome = (vault / "shared" / "Welcome to the vault.md").read_text(encoding="utf-8")
    assert "[[Example project overview]]" in welcome
    assert (vault / "project" / "example" / "Example project overview.md").is_file()
    doc = cli.ok("get", "shared/Welcome to the vault.md", ghost="alice")
    assert "project/example/Example project overview.md" in {link["path"] for link in doc["links"]["out"]}


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Quokka: habitat/range", "Quokka habitat range.md"),  # Obsidian's forbidden characters become spaces
        ("Quokka habitat", "Quokka habitat.md"),  # its name already: nothing moves
        ("quokka HABITAT", "quokka HABITAT.md"),  # a change of case is a rename too
    ],
)
def test_a_new_title_renames_the_note_named_after_it(vault: Path, cli: Cli, title: str, name: str) -> None:
    """In Obsidian the title is the file name: `note update --title` kept the old name, and
    `[[New title]]` typed in Obsidian made a new empty note (a newcomer's find)."""
    made = cli.ok("note", "create", "--title", "Quokka habitat", "--type", "fact", "--scope", "shared", "--body", "x")
    linker = cli.ok(
        "note", "create", "--title", "Linker", "--type", "fact", "--scope", "shared", "--body", "[[Quokka habitat]]"
    )
    res = cli.ok("note", "update", made["id"], "--title", title, ghost="alice")
    assert res["path"] == f"shared/{name}"
    assert sorted(p.name for p in (vault / "shared").glob("*uokka*")) == [name]
    assert cli.ok("get", f"[[{name[:-3]}]]", ghost="alice")["note"]["id"] == made["id"]
    link_target = cli.ok("links", linker["id"], ghost="alice")["out"][0]["id"]
    assert link_target == made["id"]  # the link to it rewritten, as by `note move`


def test_a_note_named_otherwise_keeps_its_name(vault: Path, cli: Cli) -> None:
    (vault / "shared" / "my jottings.md").write_text("---\ntitle: Jottings\n---\nx\n")
    res = cli.ok("note", "update", "Jottings", "--title", "Notes on quokkas", "--expect-version", "0", ghost="alice")
    assert res["path"] == "shared/my jottings.md" and "moved_from" not in res


@pytest.mark.parametrize(
    ("target", "refused"),
    [
        ("shared/Burgundy: region/", "folder 'Burgundy: region'"),
        ("shared/Burgundy: region/wines", "folder 'Burgundy: region'"),
        ("shared/Region/Wines: red", "'Wines: red' is not a file name"),
        ("shared/Held: by hand/", None),  # a folder already there is a person's: kept as it is
        ("shared/Region/", None),
    ],
)
def test_a_move_makes_only_names_obsidian_accepts(vault: Path, cli: Cli, target: str, refused: str | None) -> None:
    (vault / "shared" / "Held: by hand").mkdir()
    cli.ok("note", "create", "--title", "Burgundy", "--type", "fact", "--scope", "shared", "--body", "x")
    res = cli("note", "move", "Burgundy", target, ghost="alice")
    if refused is None:
        assert res.exit_code == 0, res.stdout
    else:
        assert res.exit_code == 5 and refused in res.data["error"]["message"]
        assert (vault / "shared" / "Burgundy.md").exists()


def test_a_renamed_note_linking_to_itself_reports_its_version(vault: Path, cli: Cli) -> None:
    made = cli.ok(
        "note", "create", "--title", "Old name", "--type", "note", "--scope", "shared", "--body", "[[Old name]]"
    )
    res = cli.ok("note", "update", made["id"], "--title", "New name", ghost="alice")
    assert f"version: {res['version']}\n" in (vault / res["path"]).read_text()
    cli.ok("note", "update", made["id"], "--body", "x", "--expect-version", str(res["version"]), ghost="alice")
