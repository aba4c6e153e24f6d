"""Front matter: split a document, load YAML safely, and edit it without disturbing a diff.

Reading uses PyYAML's C loader with the timestamp resolver removed (dates stay the strings
the user wrote) and a guard against alias bombs. Editing works on the front matter *text*:
each top-level key is a block of lines, so a changed key rewrites only its own lines and
every other key keeps its bytes, its place and its style. That is what keeps `git diff` of
a memory change down to the lines the command meant to change.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Expanded size above which a front matter counts as an alias bomb ("billion laughs").
MAX_EXPANDED_NODES = 20_000
# Nesting deeper than this is refused before composing: libyaml's composer recurses in C
# and overflows the stack (a segfault, not an exception) at a few ten thousand levels,
# which a 2 MiB file of `[[[[…` or `- - - …` easily reaches.
MAX_DEPTH = 100


def _without_timestamps(resolvers: dict[Any, Any]) -> dict[Any, Any]:
    return {key: [(tag, rx) for tag, rx in entries if tag != _TIMESTAMP_TAG] for key, entries in resolvers.items()}


class _Loader(_BaseLoader):
    pass


_Loader.yaml_implicit_resolvers = _without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)


class _Dumper(yaml.SafeDumper):
    """Block style, lists indented under their key, long lines never folded."""

    in_list = 0  # how many sequences the value being represented is inside

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def represent_sequence(self, tag: str, sequence: Any, flow_style: bool | None = None) -> yaml.SequenceNode:
        self.in_list += 1
        try:
            return super().represent_sequence(tag, sequence, flow_style)
        finally:
            self.in_list -= 1


_Dumper.yaml_implicit_resolvers = _without_timestamps(yaml.SafeDumper.yaml_implicit_resolvers)


# Line breaks YAML folds into a space in a plain or single-quoted scalar (and `\r`, which a
# block scalar cannot keep): only a double-quoted one escapes them, so they read back.
_OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")


def _represent_str(dumper: _Dumper, data: str) -> yaml.ScalarNode:
    if _OTHER_BREAKS.search(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    if "\n" in data:
        # A text of several lines as a block, readable in the file; an item of a list on one
        # line (double-quoted, `\n` escaped), as Obsidian's List property shows
        # one item a line — a comment (vault/comments.py) stays one line of the file.
        style = '"' if dumper.in_list else "|"
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _represent_str)


class FrontMatterError(ValueError):
    """The front matter could not be used; `code` is the lint problem code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class SplitDocument:
    """A document cut into its parts. `fm_text` is None when there is no front matter."""

    bom: bool
    fm_text: str | None
    body: str
    newline: str
    unclosed: bool = False


_OPEN_RE = re.compile(r"---[ \t]*(\r?\n)")
_CLOSE_RE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)", re.MULTILINE)


def split_document(text: str) -> SplitDocument:
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    opened = _OPEN_RE.match(text)
    if not opened:
        newline = "\r\n" if "\r\n" in text[:4096] else "\n"
        return SplitDocument(bom, None, text, newline)
    newline = opened.group(1)
    start = opened.end()
    close = _CLOSE_RE.search(text, start)
    if close is None:
        # Obsidian treats an unclosed block as plain text; so do we, and lint says so.
        return SplitDocument(bom, None, text, newline, unclosed=True)
    return SplitDocument(bom, text[start : close.start()], text[close.end() :], newline)


# The same patterns over bytes. The close pattern starts with `^` (MULTILINE) and is searched
# from just after the opening line's newline, so searching for a newline followed by the rest
# from that newline finds the same close: with a literal first character, which re finds fast.
_OPEN_BYTES = re.compile(_OPEN_RE.pattern.encode("ascii"), _OPEN_RE.flags & ~re.UNICODE)
_CLOSE_AFTER_NEWLINE = re.compile(b"\n" + _CLOSE_RE.pattern.removeprefix("^").encode("ascii"), re.MULTILINE)


def body_offset(raw: bytes) -> int:
    """Where `split_document`'s body starts in the bytes of an ASCII note (whose offsets are
    those of its decoded text): `query` scores such a note without decoding it."""
    opened = _OPEN_BYTES.match(raw)
    if opened is None:
        return 0
    close = _CLOSE_AFTER_NEWLINE.search(raw, opened.end() - 1)
    return 0 if close is None else close.end()


def _check_depth(fm_text: str) -> None:
    """Refuse deep nesting using the event stream, which libyaml produces without recursing."""
    depth = 0
    for event in yaml.parse(fm_text, Loader=_Loader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise FrontMatterError("invalid_yaml", "front matter nests too deeply")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def _expanded_size(node: yaml.Node, memo: dict[int, int], active: set[int]) -> int:
    key = id(node)
    if key in memo:
        return memo[key]
    if key in active:
        # `a: &x [*x]` builds a structure that contains itself: unusable and unbounded.
        raise FrontMatterError("yaml_alias_bomb", "front matter refers to itself through an alias")
    active.add(key)
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo, active) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo, active) + _expanded_size(v, memo, active) for k, v in node.value)
    active.discard(key)
    memo[key] = size
    return size


# What PyYAML's constructors raise, instead of a YAMLError, for a value its tag cannot hold
CONSTRUCT_ERRORS = (ValueError, KeyError, AttributeError, IndexError, TypeError, OverflowError)


def load_yaml(fm_text: str, repeated: list[str] | None = None) -> dict[str, Any]:
    """Parse front matter text into a JSON-safe mapping, or raise FrontMatterError.
    `repeated` gets the top-level keys the text sets more than once (YAML keeps the last)."""
    if not fm_text.strip():
        return {}
    loader = _Loader(fm_text)
    try:
        _check_depth(fm_text)
        node = loader.get_single_node()
        if node is None:
            return {}
        if _expanded_size(node, {}, set()) > MAX_EXPANDED_NODES:
            if "*" in fm_text:  # an alias (`*a`) repeats what an anchor holds: that is the bomb
                raise FrontMatterError("yaml_alias_bomb", "front matter expands beyond a safe size (alias bomb?)")
            raise FrontMatterError(
                "frontmatter_too_large",
                f"front matter holds more than {MAX_EXPANDED_NODES:,} values; vaultmem reads none",
            )
        data = loader.construct_document(node)
        # keys YAML reads as one: `title` twice, `1` and `1.0`
        mapping = isinstance(node, yaml.MappingNode) and isinstance(data, dict)
        if repeated is not None and mapping and len(data) < len(node.value):
            repeated.extend(_repeated_keys(node, loader))
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FrontMatterError("invalid_yaml", f"invalid YAML front matter: {first}") from None
    except RecursionError:
        raise FrontMatterError("invalid_yaml", "front matter nests too deeply") from None
    except FrontMatterError:
        raise  # the guards' own (a ValueError too)
    except CONSTRUCT_ERRORS:
        # PyYAML's constructors raise these, not YAMLError, for a value its explicit tag cannot
        # hold (`!!int abc`, `!!bool maybe`, `!!timestamp 2026-02-30`): a bad file, never a crash
        raise FrontMatterError("invalid_yaml", "invalid YAML front matter: a value does not fit its `!!` tag") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise FrontMatterError(
            "frontmatter_not_mapping",
            f"front matter is a {type(data).__name__}, not a mapping of keys to values",
        )
    return {str(k): jsonable(v) for k, v in data.items()}


def _repeated_keys(node: yaml.MappingNode, loader: Any) -> list[str]:
    """The keys of `node` as written, where YAML reads several as one key."""
    by_key: dict[Any, list[str]] = {}
    for key_node, _ in node.value:
        try:
            key = loader.construct_object(key_node, deep=True)
            hash(key)
        except (yaml.YAMLError, TypeError):
            continue  # an unhashable key already failed the document
        by_key.setdefault(key, []).append(str(key_node.value))
    return [" / ".join(dict.fromkeys(texts)) for texts in by_key.values() if len(texts) > 1]


def jsonable(value: Any) -> Any:
    """Turn what YAML can produce (dates, bytes, sets, non-string keys) into JSON values."""
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no NaN or Infinity; keep YAML's spelling so nothing is silently lost.
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        # A YAML !!set has no order in Python; sort so the same bytes always parse the same.
        return [jsonable(v) for v in sorted(value, key=str)]
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def dump_entry(key: str, value: Any) -> str:
    """The YAML text of one top-level `key: value` entry, ending with a newline."""
    text: str = yaml.dump(
        {key: value},
        Dumper=_Dumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=1_000_000,
    )
    return text


def dump_mapping(data: dict[str, Any]) -> str:
    return "".join(dump_entry(k, v) for k, v in data.items())


# A top-level key starts at column 0: a plain or quoted scalar followed by a colon.
_KEY_RE = re.compile(r"""^(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|([^\s#\-?:&*!|>'"%@`{\[][^:]*?))\s*:(?:\s|$)""")
_ANCHOR_RE = re.compile(r"(?:^|[\s\[{,:])[&*][^\s,\]}]")


@dataclass(slots=True)
class _Block:
    key: str | None  # None for the preamble (comments before the first key)
    lines: list[str] = field(default_factory=list)


def _take(block: _Block, lines: list[str], value: Any) -> bool:
    """`lines` as the block's, if they read back as `value` (else nothing changes)."""
    try:
        if load_yaml("".join(lines)).get(block.key or "") != value:
            return False
    except FrontMatterError:
        return False
    block.lines = lines
    return True


class FrontMatterEditor:
    """Edits front matter text one top-level key at a time.

    When the text cannot be cut into key blocks safely (flow mappings, anchors, keys the
    block scan and the YAML parser disagree on), every write re-renders the whole mapping
    in its existing key order: still correct, only a larger diff.
    """

    def __init__(self, fm_text: str, data: dict[str, Any], newline: str = "\n") -> None:
        self.newline = newline
        self._data = dict(data)
        self._blocks: list[_Block] | None = self._cut(fm_text, list(data))

    @staticmethod
    def _cut(fm_text: str, keys: list[str]) -> list[_Block] | None:
        if _ANCHOR_RE.search(fm_text):
            return None
        blocks: list[_Block] = [_Block(None)]
        for line in fm_text.splitlines(keepends=True):
            bare = line.rstrip("\r\n")
            m = _KEY_RE.match(bare)
            if m and not bare.startswith((" ", "\t")):
                key = m.group(1) if m.group(1) is not None else m.group(2)
                if key is None:
                    key = m.group(3)
                blocks.append(_Block(key.strip(), [line]))
            else:
                blocks[-1].lines.append(line)
        found = [b.key for b in blocks if b.key is not None]
        if found != keys:
            return None
        return blocks

    @property
    def data(self) -> dict[str, Any]:
        return dict(self._data)

    def keys(self) -> list[str]:
        return list(self._data)

    def set(self, key: str, value: Any) -> None:
        if key in self._data and self._data[key] == value:
            return
        old = self._data.get(key)
        self._data[key] = value
        if self._blocks is None:
            return
        new_lines = self._render_entry(key, value)
        for block in self._blocks:
            if block.key == key and self._extend(block, old, value):
                return
            if block.key == key:
                # Keep comment and blank lines that trail the old value (they usually
                # introduce the next key), replace the value lines themselves.
                trailer: list[str] = []
                for line in reversed(block.lines[1:]):
                    stripped = line.strip()
                    if stripped == "" or stripped.startswith("#"):
                        trailer.insert(0, line)
                    else:
                        break
                block.lines = new_lines + trailer
                return
        self._blocks.append(_Block(key, new_lines))

    def _extend(self, block: _Block, old: Any, value: Any) -> bool:
        """A list that only grew (a comment, a tag added): its new items as lines after the
        old ones, which keep their bytes — however a person or Obsidian wrote them. False
        (nothing changed) when the block is not a plain list of items or the result would
        not read back as `value`."""
        if not (isinstance(old, list) and isinstance(value, list) and old and value[: len(old)] == old):
            return False
        head, *rest = block.lines
        if head.rstrip("\r\n").split(":", 1)[1].strip():
            return self._extend_flow(block, old, value)  # `key: [a, b]` or a value on the key's line
        items = [line for line in rest if line.strip() and not line.strip().startswith("#")]
        indent = re.match(r"([ \t]*)- ", items[0]) if items else None
        if indent is None:
            return False
        added = [indent.group(1) + line[2:] for line in self._render_entry(block.key or "", value[len(old) :])[1:]]
        end = len(block.lines)
        while end > 1 and (not block.lines[end - 1].strip() or block.lines[end - 1].strip().startswith("#")):
            end -= 1  # comment and blank lines after the items introduce the next key
        lines = block.lines[:end] + added + block.lines[end:]
        return _take(block, lines, value)

    def _extend_flow(self, block: _Block, old: list[Any], value: list[Any]) -> bool:
        """A one-line flow list that only grew (`tags: [veg, "fruit"]  # my tags`, as a
        person or Obsidian writes it): the new items go before its `]`, the rest of the line
        (quotes, spacing, a comment) keeps its bytes. False when the line is anything else
        or the result would not read back as `value`."""
        head, *rest = block.lines
        if any(line.strip() and not line.strip().startswith("#") for line in rest):
            return False  # the list goes on below its key's line
        bare = head.rstrip("\r\n")
        close = bare.rfind("]")
        if close < 0 or "[" not in bare[:close]:
            return False
        items: str = yaml.dump(
            value[len(old) :], Dumper=_Dumper, default_flow_style=True, allow_unicode=True, width=1_000_000
        ).strip()
        if not (items.startswith("[") and items.endswith("]")):
            return False
        inside = bare[:close].rstrip()
        space = bare[len(inside) : close]  # `[ veg ]` keeps its space before the `]`
        joint = "" if inside.endswith("[") else ", "
        lines = [inside + joint + items[1:-1] + space + bare[close:] + head[len(bare) :], *rest]
        return _take(block, lines, value)

    def remove(self, key: str) -> None:
        if key not in self._data:
            return
        del self._data[key]
        if self._blocks is not None:
            self._blocks = [b for b in self._blocks if b.key != key]

    def _render_entry(self, key: str, value: Any) -> list[str]:
        text = dump_entry(key, value)
        return [line + self.newline for line in text.splitlines()]

    def render(self) -> str:
        if self._blocks is None:
            text = dump_mapping(self._data)
            return "".join(line + self.newline for line in text.splitlines())
        out = "".join("".join(b.lines) for b in self._blocks)
        if out and not out.endswith(("\n", "\r")):
            out += self.newline
        return out


def replace_front_matter(text: str, fm_text: str) -> str:
    """`text` with its front matter text (`split_document`'s `fm_text`) replaced: its `---`
    lines, a BOM and the body keep their bytes. A text without front matter is returned as is."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    rest = text[len(bom) :]
    opened = _OPEN_RE.match(rest)
    close = _CLOSE_RE.search(rest, opened.end()) if opened else None
    if opened is None or close is None:
        return text
    return bom + rest[: opened.end()] + fm_text + rest[close.start() :]


def rewrite_document(text: str, front: Callable[[str], str], body: Callable[[str], str]) -> str | None:
    """`text` with its front matter text and its body each rewritten (links retargeted by a
    move or for Obsidian), every other byte kept; None when the body is not the text's end
    as read (a rewrite would lose bytes)."""
    split = split_document(text)
    if not text.endswith(split.body):
        return None
    head = text[: len(text) - len(split.body)]
    if split.fm_text:
        new_fm = front(split.fm_text)
        head = replace_front_matter(head, new_fm) if new_fm != split.fm_text else head
    return head + body(split.body)


def compose_document(fm_text: str | None, body: str, newline: str = "\n", bom: bool = False) -> str:
    """Join front matter text and body into the file's text."""
    prefix = "\ufeff" if bom else ""
    if fm_text is None:
        return prefix + body
    return f"{prefix}---{newline}{fm_text}---{newline}{body}"
