"""Wikilinks in properties, as Obsidian (1.4+) reads them, and how to rewrite them. Pure.

A text property, or an item of a list property, whose whole value is one wikilink
(`related: "[[Wine basics]]"`, `- "[[Other|label]]"`) is a link to Obsidian: a backlink, an
edge of its graph, rewritten when its target is renamed. A link among other words
(`"see [[X]]"`), an embed (`"![[X]]"`) or a value nested deeper is text to Obsidian, and so
to vaultmem.

A rename changes only the link target inside its quotes, found in the front matter *text*
by YAML's marks: every other byte of the front matter (keys, order, comments, quoting)
stays, as in the body (vault/relink.py). A value written with escapes or as a block is
written anew, double-quoted; any rewrite that would not read back as the same front matter
with only those values changed is not made. The same rewrite writes a link by file name,
as Obsidian resolves it (`lint --fix`, vaultmem's own writes), as the body's are
(relink.file_named).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from vaultmem.vault.frontmatter import CONSTRUCT_ERRORS, FrontMatterError, _Loader, jsonable, load_yaml
from vaultmem.vault.markdown import Link, _wiki_link
from vaultmem.vault.relink import Resolve, _wiki_target_end, file_named, replace_spans

_WHOLE_LINK = re.compile(r"\[\[([^\[\]\n]*)\]\]")
_STR_TAG = "tag:yaml.org,2002:str"
# `parent` names the note's parent (index/resolve.py parent_target): a parent edge of the
# graph already, not a second edge as a link. A rename rewrites it all the same.
PARENT_KEY = "parent"
# A note's own names. A link there is counted as any, but never written by file name for
# Obsidian (file_linked_properties): that would rename the note, whose file name and
# uniqueness come from these as given.
OWN_NAMES = frozenset({"title", "aliases"})


def property_link(value: Any) -> Link | None:
    """The link a property value is, or None."""
    if not isinstance(value, str):
        return None
    m = _WHOLE_LINK.fullmatch(value)
    return _wiki_link("", m.group(1)) if m else None


def property_links(front: Mapping[str, Any], leave_out: Iterable[str] = (PARENT_KEY,)) -> list[Link]:
    """The links of a note's properties in the order written, those of `leave_out`'s keys
    (its parent, by default) left out."""
    links = []
    skip = frozenset(leave_out)
    for key, value in front.items():
        if key in skip:
            continue
        for item in value if isinstance(value, list) else [value]:
            link = property_link(item)
            if link is not None:
                links.append(link)
    return links


@dataclass(frozen=True, slots=True)
class PropertySpan:
    """A link of the property `key` in the front matter text. `start:end` is what a rewrite
    replaces: the link target inside its quotes (`quote` is `"` or `'`), or the whole scalar
    (`quote` empty) when the value is written with escapes or as a block. `value[at:to]` is
    the target in the value as read; `node_at` is where YAML's node for the value starts."""

    start: int
    end: int
    key: str
    quote: str
    value: str
    at: int
    to: int
    node_at: int
    link: Link

    def new_value(self, target: str) -> str:
        return self.value[: self.at] + target + self.value[self.to :]

    def render(self, target: str) -> str:
        """The text for `start:end` that points the link at `target`."""
        if self.quote == PLAIN and _reads_plain(target):
            return target
        if self.quote == '"':
            return target.replace("\\", "\\\\").replace('"', '\\"')
        if self.quote == "'":
            return target.replace("'", "''")
        text: str = yaml.dump(
            self.new_value(target), Dumper=yaml.SafeDumper, default_style='"', allow_unicode=True, width=1_000_000
        )
        return text.rstrip("\n")


def _scalars(root: yaml.MappingNode) -> Iterator[tuple[str, yaml.ScalarNode]]:
    """(key, node) of top-level string values and the string items of top-level lists,
    each node once (a YAML alias repeats its anchor's node)."""
    seen: set[int] = set()
    for key, node in root.value:
        for item in node.value if isinstance(node, yaml.SequenceNode) else [node]:
            if isinstance(item, yaml.ScalarNode) and item.tag == _STR_TAG and id(item) not in seen:
                seen.add(id(item))
                yield str(key.value), item


def _scalar_start(raw: str) -> int:
    """Where the scalar itself starts in a node's text, after its `&anchor` and `!tag`."""
    at = 0
    while raw[at : at + 1] in ("&", "!"):
        while at < len(raw) and not raw[at].isspace():
            at += 1
        while at < len(raw) and raw[at].isspace():
            at += 1
    return at


def _target_at(value: str) -> tuple[int, int]:
    """Where the target is in a property link's value (`[[target#heading|label]]`)."""
    return 2, 2 + _wiki_target_end(value[2:-2])


def _span(fm_text: str, key: str, node: yaml.ScalarNode) -> PropertySpan | None:
    link = property_link(node.value)
    if link is None:
        return None
    at, to = _target_at(node.value)
    return _located(fm_text, key, node, link, at, to)


def _located(fm_text: str, key: str, node: yaml.ScalarNode, link: Link, at: int, to: int) -> PropertySpan:
    value: str = node.value
    start, end = node.start_mark.index, node.end_mark.index
    raw = fm_text[start:end]
    quote = node.style if node.style in ('"', "'") else ""
    if quote and raw.endswith(quote + value + quote):
        inner = end - 1 - len(value)
        return PropertySpan(inner + at, inner + to, key, quote, value, at, to, start, link)
    if not node.style and raw == value and (at, to) == (0, len(value)):
        return PropertySpan(start, end, key, PLAIN, value, at, to, start, link)
    # escapes (`\u00e9`, `''`) or a block (`|-`): offsets in the value are not in the text
    tail = len(raw) - len(raw.rstrip("\r\n"))
    return PropertySpan(start + _scalar_start(raw), end - tail, key, "", value, at, to, start, link)


PLAIN = "plain"  # PropertySpan.quote of a value written unquoted on one line (`parent: Target`)


def _reads_plain(text: str) -> bool:
    """Whether `text` written unquoted reads back as itself (not `a: b`, `#x`, `yes`, `1.0`)."""
    if not text or "\n" in text or text != text.strip():
        return False
    try:
        return bool(yaml.safe_load(f"k: {text}\n") == {"k": text})
    except yaml.YAMLError:
        return False


def plain_parent_span(fm_text: str) -> PropertySpan | None:
    """The `parent` property when it names the parent as text (`parent: Target`, a title or
    an id, SPEC §2) rather than as a link (property_spans has those): vaultmem's own link,
    which a rename keeps pointing at its note as it keeps a wikilink."""
    try:
        load_yaml(fm_text)  # its guards first: nesting, alias bombs, a mapping
    except FrontMatterError:
        return None
    loader = _Loader(fm_text)
    try:
        root = _root(loader)
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    nodes = [] if root is None else [n for k, n in root.value if k.value == PARENT_KEY]
    node = nodes[0] if len(nodes) == 1 else None
    if not isinstance(node, yaml.ScalarNode) or node.tag != _STR_TAG or _WHOLE_LINK.fullmatch(node.value):
        return None
    if not node.value.strip():
        return None
    value: str = node.value
    at = len(value) - len(value.lstrip())
    target = value.strip()
    return _located(fm_text, PARENT_KEY, node, Link(target, "wiki"), at, at + len(target))


def _root(loader: Any) -> yaml.MappingNode | None:
    node = loader.get_single_node()
    return node if isinstance(node, yaml.MappingNode) else None


def property_spans(fm_text: str) -> list[PropertySpan]:
    """Every property link of a front matter vaultmem reads (load_yaml), in text order."""
    try:
        load_yaml(fm_text)  # its guards first: nesting, alias bombs, a mapping
    except FrontMatterError:
        return []
    loader = _Loader(fm_text)
    try:
        root = _root(loader)
    except yaml.YAMLError:
        return []
    finally:
        loader.dispose()
    if root is None:
        return []
    spans = (_span(fm_text, key, node) for key, node in _scalars(root))
    return sorted((s for s in spans if s is not None), key=lambda s: s.start)


def _read_with(fm_text: str, values: Mapping[int, str]) -> dict[str, Any] | None:
    """The front matter as load_yaml reads it, the values whose nodes start at the offsets
    of `values` replaced by theirs."""
    loader = _Loader(fm_text)
    try:
        root = _root(loader)
        if root is None:
            return None
        for _, node in _scalars(root):
            if node.start_mark.index in values:
                node.value = values[node.start_mark.index]
        data = loader.construct_document(root)
    except (yaml.YAMLError, *CONSTRUCT_ERRORS):
        return None
    finally:
        loader.dispose()
    return {str(k): jsonable(v) for k, v in data.items()} if isinstance(data, dict) else None


def relinked_properties(fm_text: str, targets: Iterable[tuple[PropertySpan, str]]) -> str | None:
    """`fm_text` with each span's link pointing at its new target, or None when the result
    would not read back as the same front matter with only those values changed."""
    pairs = list(targets)
    if not pairs:
        return fm_text
    new = replace_spans(fm_text, {s.start: (s.end, s.render(target)) for s, target in pairs})
    try:
        now = load_yaml(new)
    except FrontMatterError:
        return None
    expected = _read_with(fm_text, {s.node_at: s.new_value(target) for s, target in pairs})
    return new if expected is not None and now == expected else None


# --- written by file name, as Obsidian resolves links (lint --fix, vaultmem's own writes) ------


def file_linked_properties(
    fm_text: str, source: str, resolve: Resolve, resolve_file: Resolve, is_id: Callable[[str], bool]
) -> str:
    """`fm_text` with its property links (`parent` included) written by file name, as
    relink.file_linked writes the body's: only their targets change, as a rename's do.
    Unchanged when the rewrite would not read back (relinked_properties)."""
    targets = []
    for span in property_spans(fm_text):
        if span.key in OWN_NAMES:
            continue
        text = file_named(span.link, span.value[2:-2], span.to - 2, source, resolve, resolve_file, is_id)
        if text is not None:
            targets.append((span, text))
    return relinked_properties(fm_text, targets) or fm_text


def file_linked_value(
    value: Any, source: str, resolve: Resolve, resolve_file: Resolve, is_id: Callable[[str], bool]
) -> Any:
    """A property value about to be written (text, or a list of items) with its links
    written by file name, as file_linked_properties would write them."""
    if isinstance(value, list):
        # a top-level list's items only: a value nested deeper is text (property_links)
        return [v if isinstance(v, list) else file_linked_value(v, source, resolve, resolve_file, is_id) for v in value]
    link = property_link(value)
    if link is None:
        return value
    at, to = _target_at(value)
    text = file_named(link, value[2:-2], to - 2, source, resolve, resolve_file, is_id)
    return value if text is None else value[:at] + text + value[to:]
