"""One or two examples for every command's `--help`, short forms of the common options,
and plain argument names in usage lines. Kept in one table (cli/main.py adds them as each command is built), so every command
gets them and tests/cli/test_help.py can hold that."""

from __future__ import annotations

from typing import Any

EXAMPLES: dict[str, tuple[str, ...]] = {
    "init": (
        "vaultmem init ~/memory --ghost alice --ghost bob",
        "vaultmem init .          # adopt an existing Obsidian vault",
    ),
    "ghost add": ("vaultmem ghost add carol",),
    "ghost list": ("vaultmem ghost list --json",),
    "note create": (
        'vaultmem note create --title "Burgundy wine" --type fact --scope shared -t wine --body "Pinot Noir."',
        'vaultmem note create --title "Cellar plan" --type decision --scope private --edit',
    ),
    "note update": (
        'vaultmem note update "Burgundy wine" --append "Grand cru slopes face east."',
        "vaultmem note update 01JG0A --set importance=0.8 --add-tag france --expect-version 3",
    ),
    "note validate": ('vaultmem note validate "Burgundy wine" --by alice/gpt-x --trust 0.9',),
    "note comment": ('vaultmem note comment "Burgundy wine" --text "Checked against the atlas."',),
    "note delete": ('vaultmem note delete "Burgundy wine"',),
    "note move": ('vaultmem note move "Burgundy wine" "Burgundy"',),
    "get": (
        'vaultmem get "Burgundy wine"',
        'vaultmem get "[[Tasting notes#Reds]]" 01JG0A "Chablis.md" --json',
    ),
    "list": (
        "vaultmem list --updated-since 1d --include-deleted    # what changed since yesterday",
        "vaultmem list -s shared -t wine --sort title -n 50",
    ),
    "links": ('vaultmem links "Burgundy wine"', 'vaultmem links "[[Chablis]]" --json'),
    "tags": ("vaultmem tags", "vaultmem tags wine --sort name"),
    "orphans": ("vaultmem orphans", "vaultmem orphans --ghost alice --json"),
    "edit": ('vaultmem edit "Burgundy wine"', 'EDITOR="code --wait" vaultmem edit 01JG0A'),
    "diary": (
        'vaultmem diary --append "Tasted a 2019 Chablis."    # one timestamped line',
        "vaultmem diary --date yesterday                     # that day's entry in $EDITOR",
    ),
    "capture": ('vaultmem capture "the user prefers light reds"', "cat thought.txt | vaultmem capture - -t wine"),
    "inbox list": ("vaultmem inbox list",),
    "inbox promote": ('vaultmem inbox promote 01JG0R --title "Wine regions" --type observation --scope private',),
    "write": ("vaultmem write writes.json --json", "cat writes.json | vaultmem write - --scope shared"),
    "search": (
        'vaultmem search "which grape is red burgundy"',
        'vaultmem search "pinot" -t wine -s shared -n 5 --explain --json',
    ),
    "query": ('vaultmem query "pinot noir" --type fact', 'vaultmem query "cha[a-z]+" --regex --since 2026-11-01 -n 5'),
    "reference search": ('vaultmem reference search "vault conventions" "how do I add a ghost"',),
    "index": ("vaultmem index", "vaultmem index --full    # rebuild every index from the files"),
    "status": ("vaultmem status", "vaultmem status --json"),
    "watch": ("vaultmem watch &",),
    "lint": ("vaultmem lint", "vaultmem lint --fix    # write ids into notes that have none"),
    "fix-names": ("vaultmem fix-names --dry-run", "vaultmem fix-names"),
    "review": (
        "vaultmem review                 # what agents (and people) changed since the last commit",
        "vaultmem review origin/main..HEAD --format md --check    # a pull request, in CI",
    ),
    "commit": ("vaultmem commit", 'vaultmem commit -m "Session with the wine agent"'),
    "sync": ("vaultmem sync", "vaultmem sync --include-hand-edits --json"),
    "git setup": ("vaultmem git setup    # in each clone",),
    "merge-driver": ("vaultmem merge-driver base.md ours.md theirs.md 'shared/Note.md'    # as git runs it",),
    "history": ('vaultmem history "Burgundy wine"',),
    "revert": (
        "vaultmem revert 3f9c2a7b --dry-run",
        'vaultmem revert "Burgundy wine" --to HEAD~3',
        "vaultmem revert --by bob --since HEAD~10",
    ),
    "trash list": ("vaultmem trash list",),
    "trash restore": ("vaultmem trash restore 01JG0B",),
    "mcp": ("vaultmem mcp --ghost alice", "vaultmem mcp --http --port 8765 --session-idle 600"),
    "token add": ("vaultmem token add alice",),
    "token list": ("vaultmem token list",),
    "token revoke": ("vaultmem token revoke 3f9c2a7b1d04",),
}


# Short forms of the options most commands share: the same letter means the same thing in
# every command that has the long option (and does not use the letter for something else).
SHORT = {"--limit": "-n", "--tag": "-t", "--scope": "-s", "--json": "-j"}


def _short_options(command: Any) -> None:
    taken = {opt for param in command.params for opt in getattr(param, "opts", ())}
    for param in command.params:
        if getattr(param, "param_type_name", "") != "option":
            continue
        for long, short in SHORT.items():
            if long in param.opts and short not in taken:
                param.opts.insert(0, short)
                taken.add(short)


def _epilog(lines: tuple[str, ...]) -> str:
    # "\b" keeps click from re-wrapping the example lines into one paragraph
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def _plain_usage(command: Any) -> None:
    """Arguments in usage lines as REF, REFS..., [TEXT] (not Typer's `{ref}`)."""
    for param in command.params:
        if getattr(param, "param_type_name", "") != "argument" or param.name is None:
            continue
        name = param.name.upper() + ("..." if param.nargs != 1 else "")
        param.metavar = name
        piece = name if param.required else f"[{name}]"
        param.get_usage_pieces = lambda ctx, piece=piece: [piece]


def polish(name: str, command: Any) -> None:
    """Examples and plain argument names for a command and its subcommands."""
    _plain_usage(command)
    _short_options(command)
    if name in EXAMPLES and not command.epilog:
        command.epilog = _epilog(EXAMPLES[name])
    for sub_name, sub in getattr(command, "commands", {}).items():
        polish(f"{name} {sub_name}", sub)
