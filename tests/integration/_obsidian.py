"""A small vault in the style of Obsidian Help, and how Obsidian resolves its links.

Fifteen notes copied into a vault's `shared/`: aliases, `|labels`, `#headings`, `![[embeds]]`,
folder-qualified targets, duplicate file names in different folders, markdown links (relative,
url-encoded, angle-bracketed), an id link, a parent, and links inside code that are not links.
EXPECTED_OUT was worked out by hand from Obsidian's rules, not by running vaultmem.
"""

from __future__ import annotations

from pathlib import Path

from tests.integration._vaults import note

ALIASES_ID = "01JB2Q7ZK3M4N5P6Q7R8S9T0VW"

NOTES: dict[str, tuple[dict[str, object], str]] = {
    "Home.md": (
        {},
        """# Welcome

Welcome to the help vault. Start with [[Getting started]], then learn
[[Linking notes|how to link]] and [[Embeds#Embed a note]].

![[Callouts]]

Plugins are described in [[Plugins/Overview]] and themes in [[Themes/Overview|themes]].
This page does not exist yet: [[Missing page]].

Inline code is not a link: `[[Aliases]]`.

```markdown
A fenced example: [[Aliases]] and ![[Glossary]]
```
""",
    ),
    "Getting started.md": (
        {"aliases": ["Quick start", "Install"], "tags": ["basics"]},
        """# Getting started

Install the app, open a folder as a vault and go back [[Home]].
Read about [[linking notes]] next (links ignore letter case), and [Embeds](Embeds.md).

## Install

Download the installer for your platform. See also [[Embeds.md]].
""",
    ),
    "Linking notes.md": (
        {"aliases": ["Internal links"]},
        """# Linking notes

Wikilinks point at a note by name: [[Quick start]] is an alias of the getting-started note.
Link to a heading with [[Aliases#Add an alias|an alias heading]].
Links inside code do not count:

~~~
[[Callouts]]
~~~

Nor do these: `![[Embeds]]`, ``[[Home]]``.
""",
    ),
    "Embeds.md": (
        {"tags": ["embeds"]},
        """# Embeds

## Embed a note

Write an exclamation mark before a link: ![[Home#Welcome]].

## Embed an image

![[diagram.png]] is an attachment, not a note.
""",
    ),
    "Callouts.md": (
        {},
        """# Callouts

> [!note] A callout
> Callouts can hold links too: see [[Embeds]].

Terms are explained in the [[Glossary]].
""",
    ),
    "Aliases.md": (
        {"id": ALIASES_ID, "title": "Aliases", "aliases": ["Alias", "Nickname"]},
        """# Aliases

## Add an alias

Add `aliases:` to the front matter. Back to [[Getting started]].
""",
    ),
    "Glossary.md": (
        {"parent": "Home"},
        """# Glossary

**Callout**: see [[Callouts#Types|callout types]].
**Vault**: a folder of notes.
""",
    ),
    "Index.md": (
        {},
        """# Index

- [[Home]]
- [[Plugins/Index]]
- [Core plugins](Plugins/Core%20plugins.md)
- [[plugins/overview|Plugins overview in lower case]]
""",
    ),
    "Plugins/Overview.md": (
        {"title": "Plugins overview"},
        """# Plugins

Obsidian ships [[Core plugins]]. Everything about themes: [[Themes overview]].
""",
    ),
    "Plugins/Core plugins.md": (
        {},
        """# Core plugins

Back to the [[Overview]] of plugins. This folder has its own [[Index]].
""",
    ),
    "Plugins/Index.md": (
        {},
        """# Plugin index

Up: [[Home]].
""",
    ),
    "Themes/Overview.md": (
        {"title": "Themes overview"},
        """# Themes

Browse [[Community themes]]. The vault-wide [[Index]] lists everything.
""",
    ),
    "Themes/Community themes.md": (
        {},
        """# Community themes

See the [[Overview]], ask [[Nickname]] and link by id: [[01JB2Q7ZK3M4N5P6Q7R8S9T0VW]].
""",
    ),
    "Advanced/Formatting.md": (
        {},
        """# Formatting

Go [back](../Home.md) or read [about embeds](<../Embeds.md#Embed a note>).
External links are not notes: [site](https://obsidian.md/Home.md).
""",
    ),
    "Advanced/Shortcuts.md": (
        {},
        """# Shortcuts

See [[Formatting]] and [[Getting started#Install|install]].
""",
    ),
}

S = "shared/"

# source -> the notes its links resolve to, as Obsidian resolves them (worked out by hand).
EXPECTED_OUT: dict[str, set[str]] = {
    "Home.md": {
        "Getting started.md",
        "Linking notes.md",
        "Embeds.md",
        "Callouts.md",
        "Plugins/Overview.md",
        "Themes/Overview.md",
    },  # not Aliases.md nor Glossary.md: those links sit in code
    "Getting started.md": {"Home.md", "Linking notes.md", "Embeds.md"},
    "Linking notes.md": {"Getting started.md", "Aliases.md"},  # alias; not Callouts (code)
    "Embeds.md": {"Home.md"},
    "Callouts.md": {"Embeds.md", "Glossary.md"},
    "Aliases.md": {"Getting started.md"},
    "Glossary.md": {"Callouts.md"},  # its parent is not a link
    "Index.md": {"Home.md", "Plugins/Index.md", "Plugins/Core plugins.md", "Plugins/Overview.md"},
    "Plugins/Overview.md": {"Plugins/Core plugins.md", "Themes/Overview.md"},  # by title
    # a duplicate file name resolves to the one in the linking note's folder
    "Plugins/Core plugins.md": {"Plugins/Overview.md", "Plugins/Index.md"},
    "Plugins/Index.md": {"Home.md"},
    # no Index in Themes/: the shortest path wins
    "Themes/Overview.md": {"Themes/Community themes.md", "Index.md"},
    "Themes/Community themes.md": {"Themes/Overview.md", "Aliases.md"},  # alias and id: one target
    "Advanced/Formatting.md": {"Home.md", "Embeds.md"},  # relative markdown links
    "Advanced/Shortcuts.md": {"Advanced/Formatting.md", "Getting started.md"},
}
# (source, target) -> (kind, heading, label) of the link as written.
DETAILS: dict[tuple[str, str], tuple[str, str | None, str | None]] = {
    ("Home.md", "Linking notes.md"): ("link", None, "how to link"),
    ("Home.md", "Embeds.md"): ("link", "Embed a note", None),
    ("Home.md", "Callouts.md"): ("embed", None, None),
    ("Home.md", "Themes/Overview.md"): ("link", None, "themes"),
    ("Linking notes.md", "Aliases.md"): ("link", "Add an alias", "an alias heading"),
    ("Embeds.md", "Home.md"): ("embed", "Welcome", None),
    ("Glossary.md", "Callouts.md"): ("link", "Types", "callout types"),
    ("Index.md", "Plugins/Overview.md"): ("link", None, "Plugins overview in lower case"),
    ("Advanced/Formatting.md", "Embeds.md"): ("link", "Embed a note", "about embeds"),
    ("Advanced/Shortcuts.md", "Getting started.md"): ("link", "Install", "install"),
}
EXPECTED_DANGLING = {"Home.md": {"Missing page"}, "Embeds.md": {"diagram.png"}}
PARENT = {"Glossary.md": "Home.md"}


def build(root: Path) -> list[str]:
    """Copy the help vault into `root/shared/`; returns the vault-relative note paths."""
    rels = []
    for rel, (front, body) in NOTES.items():
        note(root, S + rel, body, **front)
        rels.append(S + rel)
    return rels
