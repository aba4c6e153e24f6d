"""Secrets in note text: API keys, tokens, private keys, passwords (issue 25, item 4).

Memory is durable and shared: a key an agent pastes into a note is in every clone, every
backup and the git history from then on. So a write that adds a secret is refused unless
the caller says it means it (`--allow-secret`), and `lint` reports secrets already in notes.

Detection is Yelp's detect-secrets (its line plugins with its default filters, as its
scanner runs them on a markdown file: known key formats — AWS, GitHub, Slack, Stripe,
private key blocks, JWTs … — and `password = "…"`-style assignments, high-entropy strings
only inside quotes), not regular expressions of our own. Only the lines a write adds are
checked, so a note that already held a key (a person put it there) does not block every
later write to it. A finding names its kind and line, never its text.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any

from vaultmem.errors import InvalidInput
from vaultmem.vault.note import ParsedNote


@dataclass(frozen=True, slots=True)
class Secret:
    kind: str  # detect-secrets' name for it: "AWS Access Key", "Private Key", …
    line: int  # 1-based, in the text scanned

    def where(self) -> str:
        return f"{self.kind} on line {self.line}"


def find_secrets(text: str, lines: Collection[int] | None = None) -> list[Secret]:
    """The secrets in `text` (only on `lines`, 1-based, when given), one per kind and line,
    in line order. Each distinct non-blank line is scanned once (~0.5 ms a line: a title
    that repeats a body's first line, or the same line twice, costs one scan)."""
    at: dict[str, list[int]] = {}
    for n, line in enumerate(text.split("\n"), 1):
        if (lines is None or n in lines) and line.strip():
            at.setdefault(line, []).append(n)
    if not at:
        return []
    could_hold = _screen()
    first = {numbers[0]: line for line, numbers in at.items() if could_hold(line)}
    if not first:
        return []
    found: dict[tuple[int, str], Secret] = {}
    for number, kind in _scan(text.split("\n"), sorted(first)):
        for n in at[first[number]]:
            found.setdefault((n, kind), Secret(kind, n))
    return sorted(found.values(), key=lambda s: (s.line, s.kind))


def _scan(all_lines: list[str], numbers: list[int]) -> Iterator[tuple[int, str]]:
    """(line number, kind) of what detect-secrets finds on the lines `numbers` of a file of
    `all_lines`: its own line scan (detect_secrets.core.scan._process_line_based_plugins),
    each line judged with its real neighbours as context (an allowlist comment on the line
    before, a keyword's assignment) though only some lines are scanned."""
    from detect_secrets.core.scan import _is_filtered_out, _scan_line, get_code_snippet, get_plugins

    _scanner()  # every plugin and the default filters, configured once
    filename = "note.md"  # a markdown file: the plugins' rules for prose (entropy only in quotes)
    for number in numbers:
        line = all_lines[number - 1].rstrip()
        context = get_code_snippet(lines=all_lines, line_number=number)
        if _is_filtered_out(required_filter_parameters=["line"], filename=filename, line=line, context=context):
            continue
        for plugin in get_plugins():
            for secret in _scan_line(plugin=plugin, filename=filename, line=line, line_number=number, context=context):
                if not _is_filtered_out(
                    required_filter_parameters=["context"],
                    filename=secret.filename,
                    secret=secret.secret_value,
                    plugin=plugin,
                    line=line,
                    context=context,
                ):
                    yield number, str(secret.type)


@functools.cache
def _screen() -> Callable[[str], bool]:
    """Whether a line could hold what any of detect-secrets' plugins looks for — a key
    format's pattern, a keyword, a quoted string of an entropy plugin's characters — from
    the plugins' own patterns. Only such lines are scanned: the scan's plugin and filter
    machinery costs ~1 ms a line, the screen ~30 µs, and one line in seven of prose passes
    it. A plugin the screen does not know (a newer detect-secrets) lets every line through."""
    from detect_secrets.core.scan import get_plugins
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.keyword import DENYLIST_REGEX, KeywordDetector

    _scanner()  # the plugins as the scan configures them
    patterns: list[re.Pattern[str]] = []
    for plugin in get_plugins():
        if isinstance(plugin, RegexBasedDetector):
            patterns.extend(plugin.denylist)
        elif isinstance(plugin, KeywordDetector):
            patterns.append(re.compile(DENYLIST_REGEX, re.IGNORECASE))
        elif isinstance(getattr(plugin, "regex", None), re.Pattern):
            patterns.append(plugin.regex)  # the entropy plugins' quoted strings
        else:
            return lambda line: True
    # One search a line: the patterns of each set of flags joined into one alternation (a
    # pattern with a back-reference keeps its own: its group numbers would move).
    by_flags: dict[int, list[str]] = {}
    alone: list[re.Pattern[str]] = []
    for pattern in patterns:
        if re.search(r"\\\d|\(\?P=", pattern.pattern):
            alone.append(pattern)
        else:
            by_flags.setdefault(pattern.flags, []).append(f"(?:{pattern.pattern})")
    joined = [re.compile("|".join(parts), flags) for flags, parts in by_flags.items()] + alone
    return lambda line: any(p.search(line) for p in joined)


@functools.cache
def _scanner() -> Callable[..., Iterator[Any]]:
    """detect-secrets' line scanner, with every plugin and the default filters configured
    once per process (its `default_settings()` context costs ~1 ms a call). It reads a
    markdown file's lines as its own scanner would: the plugins' rules for prose (entropy
    only in quotes). Imported here, by the writes and the lint that need it."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.settings import cache_bust, configure_settings_from_baseline

    cache_bust()
    kinds: list[type] = list(get_mapping_from_secret_type_to_class().values())
    plugins = [{"name": kind.__name__} for kind in kinds]
    configure_settings_from_baseline({"plugins_used": plugins})
    return _process_line_based_plugins


def scanner_version() -> str:
    """Which detector scanned (a cached finding is only as good as the detector's version)."""
    from importlib.metadata import version

    return f"detect-secrets {version('detect-secrets')}"


def file_text(note: ParsedNote) -> str:
    """A note's text as its file holds it, line for line (front matter, then body), so that
    line numbers are the file's."""
    if note.fm_text is None:
        return note.body
    return f"---\n{note.fm_text}---\n{note.body}"  # the block ends at a line's start: "" or ends with a newline


def added_lines(old: str, new: str) -> set[int]:
    """The 1-based numbers of the lines of `new` that `old` does not hold there (a line
    diff): what a write adds or changes."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    out: set[int] = set()
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            out.update(range(j1 + 1, j2 + 1))
    return out


# Front matter that vaultmem writes from its own values (ids, enums, numbers, dates, hashes):
# never a caller's text, so never scanned (a write's cost is the lines a caller wrote).
BOOKKEEPING = frozenset(
    {
        "id", "type", "scope", "owner", "project", "parent", "trust_score", "confidence", "importance", "created",
        "updated", "expires", "version", "hash", "last_validated_at", "memory_type", "captured",
    }
)  # fmt: skip


def key_lines(text: str, keys: Collection[str] = BOOKKEEPING) -> set[int]:
    """The lines (1-based) of `text`'s front matter block that hold one of `keys`."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return set()
    out = set()
    for n, line in enumerate(lines[1:], 2):
        if line.rstrip() in ("---", "..."):
            break
        key = line.split(":", 1)[0]
        if ":" in line and key in keys:
            out.add(n)
    return out


def refuse_secrets(new: str, old: str = "", what: str = "the note", allow: bool = False) -> None:
    """Raise InvalidInput (exit 5) when `new` adds a secret to `old`, naming each kind and
    line of `what`, never the secret; nothing is written. `allow`: the caller's
    `--allow-secret`."""
    if allow:
        return
    lines = added_lines(old, new) if old else set(range(1, new.count("\n") + 2))
    found = find_secrets(new, lines - key_lines(new))
    if found:
        listed = "; ".join(s.where() for s in found)
        raise InvalidInput(
            f"{what} would hold a secret ({listed}); nothing written. Remove it (keep secrets in a secret "
            "manager, not in memory), or store it anyway with --allow-secret on the command line"
        )
