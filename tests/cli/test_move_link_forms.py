"""A link-forms probe of the commands that rewrite links in people's notes (`note move`,
`fix-names`, `lint --fix`, writes): each rewritten file links to the same notes in Obsidian
as before, every other byte stays, and text that is no link is never rewritten."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_moves_trash import _note
from tests.conftest import Cli


def _out(cli: Cli, ref: str) -> list[str]:
    return sorted(link["path"] for link in cli.ok("get", ref)["links"]["out"])


def test_a_move_never_hands_another_note_s_links_to_the_moved_one(cli: Cli, vault: Path) -> None:
    """A probe's find: `[[X]]` in shared/b/L.md meant shared/X.md; a note moved to
    shared/b/X.md took it (a file name in the linking note's own folder wins, in vaultmem and
    in Obsidian), and the move rewrote nothing: the person's link silently meant another
    note. Such links are now written with the path of the note they meant; a link the move
    does not change the meaning of (from another folder) stays as typed."""
    _note(vault, "shared/X.md", "X", "the first X")
    _note(vault, "shared/c/Y.md", None, "y")  # no title: it keeps the stem, no shared title clash
    near = _note(vault, "shared/b/L.md", "L", "[[X]] [[X#Part|label]] [m](X.md) [up](../X.md) [[Y]]")
    prop = vault / "shared/b/P.md"
    prop.write_text('---\ntitle: P\nrelated: "[[X]]"\n---\nx\n', encoding="utf-8")
    far = _note(vault, "shared/c/Far.md", "Far", "[[X]] [m](../X.md)")
    far_before = far.read_bytes()
    assert _out(cli, "L") == ["shared/X.md", "shared/c/Y.md"]

    cli.ok("note", "move", "shared/c/Y.md", "shared/b/X.md")

    assert near.read_text(encoding="utf-8").endswith(
        "[[shared/X]] [[shared/X#Part|label]] [m](../X.md) [up](../X.md) [[shared/b/X]]\n"
    )
    assert prop.read_text(encoding="utf-8") == '---\ntitle: P\nrelated: "[[shared/X]]"\n---\nx\n'
    assert far.read_bytes() == far_before
    assert _out(cli, "L") == ["shared/X.md", "shared/b/X.md"]
    assert _out(cli, "shared/b/P.md") == ["shared/X.md"]


def test_a_markdown_link_without_md_is_a_link_a_move_keeps(cli: Cli, vault: Path) -> None:
    """A probe's find: Obsidian links `[x](Three%20laws%20of%20motion)` to `Three laws of
    motion.md` (its Help, Internal links), but vaultmem read only `.md` paths as links: the
    graph missed it and a move left it pointing nowhere. It is rewritten as typed, without
    `.md`; a path with another extension stays an attachment."""
    _note(vault, "shared/Three laws of motion.md", "Three laws of motion", "# Laws")
    _note(vault, "shared/a/pic.png", None, "")  # any file: only its name matters here
    linker = _note(
        vault,
        "shared/a/Physics.md",
        "Physics",
        "[laws](../Three%20laws%20of%20motion) [first](<../Three laws of motion#Laws>) ![p](pic.png)",
    )
    assert _out(cli, "Physics") == ["shared/Three laws of motion.md"]
    cli.ok("note", "move", "Three laws of motion", "Newton's laws")
    assert linker.read_text(encoding="utf-8").endswith(
        "[laws](../Newton's%20laws) [first](<../Newton's laws#Laws>) ![p](pic.png)\n"
    )
    assert _out(cli, "Physics") == ["shared/Newton's laws.md"]
    cli.ok("note", "move", "Physics", "shared/b/")
    assert (
        (vault / "shared/b/Physics.md")
        .read_text(encoding="utf-8")
        .endswith("[laws](../Newton's%20laws) [first](<../Newton's laws#Laws>) ![p](../a/pic.png)\n")
    )


HIDDEN = (
    "%% [[Target]] a comment %%\n<!-- [[Target]] -->\n%%\n[[Target]] a block comment\n%%\n"
    "$$\n[[Target]]\n$$\n$[[Target]]$ and `[[Target]]`\n"
)


def test_links_in_comments_and_math_stay_as_typed(cli: Cli, vault: Path) -> None:
    """A probe's find: `note move` and `lint --fix` rewrote `[[Target]]` inside `%%…%%` and
    `<!--…-->` comments and `$$…$$` / `$…$` math, which Obsidian reads as no link (its
    rename leaves them), and `links` counted them. Only the real link changes now."""
    _note(vault, "shared/Target.md", "Target", "t", "01JAAAAAAAAAAAAAAAAAAAAAB1")
    ref = _note(vault, "shared/Ref.md", "Ref", HIDDEN + "[[Target]]")
    assert len(cli.ok("get", "Ref")["links"]["out"]) == 1
    cli.ok("note", "move", "Target", "Renamed")
    assert ref.read_text(encoding="utf-8").endswith(HIDDEN + "[[shared/Renamed]]\n")
    hidden_id = HIDDEN.replace("[[Target]]", "[[01JAAAAAAAAAAAAAAAAAAAAAB1]]")
    by_id = _note(vault, "shared/ById.md", "ById", hidden_id + "[[01JAAAAAAAAAAAAAAAAAAAAAB1]]")
    cli.ok("lint", "--fix")
    assert by_id.read_text(encoding="utf-8").endswith(hidden_id + "[[shared/Renamed]]\n")


def test_a_link_by_title_or_alias_keeps_its_text_when_a_move_rewrites_it(cli: Cli, vault: Path) -> None:
    """A probe's find: a move wrote `[[Wine: basics]]` (the note's title, kept by the move)
    and `[[Vino]]` (an alias) as `[[shared/Vins]]`, so the words a person reads in the note
    changed. Written by file name, such a link keeps its text as its label, as `lint --fix`
    writes it; a link by file name or with a label of its own is not labelled."""
    wine = vault / "shared/Wine basics.md"
    wine.write_text('---\ntitle: "Wine: basics"\naliases: [Vino]\n---\n# Soils\n', encoding="utf-8")
    ref = _note(
        vault,
        "shared/Ref.md",
        "Ref",
        "[[Wine: basics]] [[Vino#Soils]] [[Vino|v]] ![[Vino]] [[Wine basics]]\n\n| x | y |\n|---|---|\n| [[Vino]] | z |",
    )
    cli.ok("note", "move", "Wine: basics", "Vins")
    assert ref.read_text(encoding="utf-8").endswith(
        "[[shared/Vins|Wine: basics]] [[shared/Vins#Soils|Vino#Soils]] [[shared/Vins|v]] ![[shared/Vins|Vino]] "
        "[[shared/Vins]]\n\n| x | y |\n|---|---|\n| [[shared/Vins\\|Vino]] | z |\n"
    )
    assert _out(cli, "Ref") == ["shared/Vins.md"]


def test_a_parent_named_by_title_follows_a_rename(cli: Cli, vault: Path) -> None:
    """A probe's find: `parent: Target` (a parent by title, SPEC §2) dangled after
    `note move Target Renamed`, which renamed the note and its title (its title was its file
    name): the move rewrote `parent: "[[Target]]"` but not the parent named as text, so
    `links` lost the child and `lint` warned. It is rewritten as a link is, quoting and
    comment kept; a parent by id stays."""
    _note(vault, "shared/Target.md", "Target", "t", "01JAAAAAAAAAAAAAAAAAAAAAC1")
    children = {
        "Plain": "parent: Target   # the parent\n",
        "Quoted": "parent: 'target'\n",
        "Link": 'parent: "[[Target]]"\n',
        "ById": "parent: 01JAAAAAAAAAAAAAAAAAAAAAC1\n",
    }
    for name, line in children.items():
        (vault / f"shared/{name}.md").write_text(f"---\ntitle: {name}\n{line}---\nx\n", encoding="utf-8")
    assert len(cli.ok("links", "Target")["children"]) == 4
    cli.ok("note", "move", "Target", "Renamed")
    after = {name: (vault / f"shared/{name}.md").read_text(encoding="utf-8") for name in children}
    assert after["Plain"] == "---\ntitle: Plain\nparent: shared/Renamed   # the parent\n---\nx\n"
    assert after["Quoted"] == "---\ntitle: Quoted\nparent: 'shared/Renamed'\n---\nx\n"
    assert after["Link"] == '---\ntitle: Link\nparent: "[[shared/Renamed]]"\n---\nx\n'
    assert after["ById"] == "---\ntitle: ById\nparent: 01JAAAAAAAAAAAAAAAAAAAAAC1\n---\nx\n"
    assert len(cli.ok("links", "Renamed")["children"]) == 4


def test_a_markdown_link_with_parentheses_in_its_path_is_kept(cli: Cli, vault: Path) -> None:
    """A probe's find: `[a](Meeting%20(draft).md)`, as Obsidian writes a link to
    `Meeting (draft).md` (spaces encoded, parentheses not), was no link to vaultmem: a move
    of the note left it pointing nowhere."""
    _note(vault, "shared/Meeting (draft).md", "Meeting (draft)", "m")
    ref = _note(vault, "shared/Ref.md", "Ref", "[a](Meeting%20(draft).md) and [see [1]](Meeting%20(draft).md#Top)")
    assert _out(cli, "Ref") == ["shared/Meeting (draft).md"]
    cli.ok("note", "move", "Meeting (draft)", "Meeting final")
    assert ref.read_text(encoding="utf-8").endswith("[a](Meeting%20final.md) and [see [1]](Meeting%20final.md#Top)\n")


def test_an_image_inside_a_link_follows_its_note(cli: Cli, vault: Path) -> None:
    """A linked image (`[![alt](pic.png)](https://…)`, a badge): once a link's text could
    hold brackets, the link was read whole and the image in it no more, so a move to another
    folder left the image's path pointing from the old one (a broken image), and an image
    of a note inside a link was no link."""
    _note(vault, "shared/a/pic.png", None, "")
    _note(vault, "shared/Other.md", "Other", "o")
    _note(vault, "shared/a/Shown.md", "Shown", "s")
    _note(vault, "shared/a/N.md", "N", "[![pic](pic.png)](https://example.com) [![s](Shown.md)](../Other.md)")
    assert _out(cli, "N") == ["shared/Other.md", "shared/a/Shown.md"]
    cli.ok("note", "move", "N", "shared/b/")
    assert (
        (vault / "shared/b/N.md")
        .read_text(encoding="utf-8")
        .endswith("[![pic](../a/pic.png)](https://example.com) [![s](../a/Shown.md)](../Other.md)\n")
    )


def test_a_link_without_md_to_a_name_with_a_dot_keeps_md(cli: Cli, vault: Path) -> None:
    """`[laws](Laws)` and a move to `Laws v1.2.md`: written `[laws](Laws%20v1.2)`, it read as
    a link to a `.2` file, no note (names_a_note): the graph lost it and the next move left
    it pointing at a name no file has. Such a name keeps its `.md`."""
    _note(vault, "shared/Laws.md", "Laws", "l")
    physics = _note(vault, "shared/Physics.md", "Physics", "[laws](Laws)")
    cli.ok("note", "move", "Laws", "Laws v1.2")
    assert physics.read_text(encoding="utf-8").endswith("[laws](Laws%20v1.2.md)\n")
    assert _out(cli, "Physics") == ["shared/Laws v1.2.md"]
    cli.ok("note", "move", "Laws v1.2", "Laws final")
    assert physics.read_text(encoding="utf-8").endswith("[laws](Laws%20final.md)\n")
