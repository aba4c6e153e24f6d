"""The MCP tools, stated once, without the SDK: names, input schemas, the aliases models
guess, annotations, and how a call becomes the `vaultmem` command line whose `--json`
output is the tool's structured result.

A tool call is a CLI command: the same parsing of values, the same service, the same JSON
shape and the same error codes (SPEC §6) — and, when a watcher runs, the same forwarding to
it (runner.py). Identity is never an argument here: the server adds `--ghost`.

Kept small on purpose: the whole `tools/list` answer must stay under 2,500 tokens
(characters / 4; tests/mcp/test_tools_list.py), so descriptions are one or two sentences and
rarely-needed options are accepted but not described at length.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vaultmem.errors import InvalidInput

Args = dict[str, Any]

# memory_search's scopes (seed 003) -> the CLI's; the CLI's own names are accepted too.
SCOPES = {
    "all": "all",
    "shared_only": "shared",
    "private_only": "private",
    "projects_only": "project",
    "diary_only": "diary",
    "inbox_only": "inbox",
}
CLI_SCOPES = ("shared", "private", "project", "diary", "inbox")

S: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
N: dict[str, Any] = {"type": "number"}
B: dict[str, Any] = {"type": "boolean"}
L: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
SCOPE: dict[str, Any] = {"enum": list(SCOPES)}

# Names models commonly use for a parameter, by tool family; applied before the check for
# unknown parameters. `top_k`, `limit`, `k`, `n` all mean "at most this many results".
LIMIT_ALIASES = ("top_k", "limit", "k", "n", "max_results", "num_results")


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...]
    argv: Callable[[Args, str | None], list[str]]
    output_keys: tuple[str, ...]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    aliases: Mapping[str, str] = field(default_factory=dict)
    text: Callable[[Any], str] | None = None  # the short text for the model; default: a JSON line

    @property
    def accepted(self) -> list[str]:
        nested = self.properties.get("options", {}).get("properties", {})
        return [name for name in self.properties if name != "options"] + [f"options.{name}" for name in nested]

    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": self.properties}
        if self.required:
            schema["required"] = list(self.required)
        return schema

    def output_schema(self) -> dict[str, Any]:
        # The CLI's `--json` document: its top-level keys are the contract (SPEC §6).
        return {"type": "object", "required": list(self.output_keys)}

    def annotations(self) -> dict[str, bool]:
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": False,
        }

    def command(self, arguments: Mapping[str, Any] | None, ghost: str | None) -> list[str]:
        """The CLI command line (without --vault/--ghost/--json) for these arguments."""
        return self.argv(self.normalize(arguments or {}), ghost)

    def normalize(self, arguments: Mapping[str, Any]) -> Args:
        """Aliases applied, nested `options`/`patch` flattened, unknown names refused."""
        if not isinstance(arguments, Mapping):
            raise InvalidInput(f"{self.name}: arguments must be an object")
        args: Args = {}
        for key, value in arguments.items():
            if key in ("options", "patch") and isinstance(value, Mapping):
                # Nested as the seeds write them (`options.max_results`, `patch.body`), or flat.
                for k, v in value.items():
                    self._put(args, k, v)
            else:
                self._put(args, key, value)
        missing = [name for name in self.required if args.get(name) in (None, "")]
        if missing:
            raise InvalidInput(
                f"{self.name}: missing required parameter {', '.join(missing)}; accepted: {', '.join(self.accepted)}"
            )
        return args

    @property
    def properties_flat(self) -> set[str]:
        names = set(self.properties)
        opts = self.properties.get("options", {}).get("properties", {})
        return names | set(opts)

    def _put(self, args: Args, key: str, value: Any) -> None:
        name = self.aliases.get(key, key)
        if name not in self.properties_flat:
            raise InvalidInput(f"{self.name}: unknown parameter {key!r}; accepted: {', '.join(self.accepted)}")
        if value is not None:
            args[name] = value


# --- values --------------------------------------------------------------------------------


def _text(args: Args, name: str) -> str:
    value = args[name]
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    return value


def _number(name: str, value: Any, integer: bool = False) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        if isinstance(value, str):
            try:
                return _number(name, int(value) if integer else float(value), integer)
            except ValueError:
                pass
        raise InvalidInput(f"{name} must be a {'whole ' if integer else ''}number, not {value!r}")
    if integer:
        if value != int(value):
            raise InvalidInput(f"{name} must be a whole number, not {value!r}")
        return str(int(value))
    return repr(float(value))


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise InvalidInput(f"{name} must be true or false, not {value!r}")


def _strings(name: str, value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InvalidInput(f"{name} must be a string or a list of strings")


def _scope(value: Any, allowed: tuple[str, ...] | None = None) -> str:
    if not isinstance(value, str):
        raise InvalidInput("scope must be a string")
    scope = SCOPES.get(value, value)
    if scope not in (allowed or ("all", *CLI_SCOPES)):
        names = ", ".join(allowed or (*SCOPES, *CLI_SCOPES))
        raise InvalidInput(f"scope {value!r} is not one of {names}")
    return scope


def _opts(args: Args, flags: Mapping[str, tuple[str, str]]) -> list[str]:
    """Options from a table name -> (flag, kind): kind s(tring), i(nt), f(loat), l(ist)."""
    out: list[str] = []
    for name, (flag, kind) in flags.items():
        if name not in args:
            continue
        value = args[name]
        if kind == "l":
            for item in _strings(name, value):
                out += [flag, item]
        elif kind == "i":
            out += [flag, _number(name, value, integer=True)]
        elif kind == "f":
            out += [flag, _number(name, value)]
        else:
            if not isinstance(value, str):
                raise InvalidInput(f"{name} must be a string")
            out += [flag, value]
    return out


def _ref(args: Args) -> str:
    return _text(args, "note_id")


def _expect(args: Args) -> list[str]:
    return _opts(args, {"expect_version": ("--expect-version", "i")})


def _positional(*values: str) -> list[str]:
    # After `--` nothing is an option: a query or a body starting with "-" stays text.
    return ["--", *values]


# --- command lines -------------------------------------------------------------------------


def _search(args: Args, ghost: str | None) -> list[str]:
    argv = ["search"]
    if "scope" in args:
        argv += ["--scope", _scope(args["scope"])]
    argv += _opts(
        args,
        {
            "max_results": ("--limit", "i"), "bm25_weight": ("--bm25-weight", "f"),
            "embedding_weight": ("--embedding-weight", "f"), "rrf_k": ("--rrf-k", "f"),
            "graph_depth": ("--graph-depth", "i"), "trust_bias": ("--trust-bias", "f"),
            "budget_tokens": ("--budget-tokens", "i"), "mode": ("--mode", "s"), "tags": ("--tag", "l"),
            "types": ("--type", "l"), "min_score": ("--min-score", "f"),
        },
    )  # fmt: skip
    for name, flag in (
        ("include_links_in", "--no-links-in"),
        ("include_links_out", "--no-links-out"),
        ("include_parent", "--no-parent"),
    ):
        if name in args and not _bool(name, args[name]):
            argv.append(flag)
    return [*argv, *_positional(_text(args, "query"))]


def _get(args: Args, ghost: str | None) -> list[str]:
    argv = ["get"]
    if "scope" in args:
        argv += ["--scope", _scope(args["scope"])]
    return [*argv, *_positional(_text(args, "note_id_or_title"))]


def _capture(args: Args, ghost: str | None) -> list[str]:
    scope = _scope(args.get("scope", "private_only"), ("private", "shared"))
    argv = ["capture", "--scope", scope, *_opts(args, {"tags": ("--tag", "l"), "source": ("--source", "s")})]
    return [*argv, *_positional(_text(args, "payload"))]


def _reference(args: Args, ghost: str | None) -> list[str]:
    argv = ["reference", "search", *_opts(args, {"max_results": ("--limit", "i"), "rrf_k": ("--rrf-k", "f")})]
    return [*argv, *_positional(_text(args, "topic"), _text(args, "question"))]


def _query(args: Args, ghost: str | None) -> list[str]:
    argv = ["query"]
    if "scope" in args:
        argv += ["--scope", _scope(args["scope"])]
    argv += _opts(
        args,
        {
            "types": ("--type", "l"), "memory_type": ("--memory-type", "s"), "since": ("--since", "s"),
            "until": ("--until", "s"), "max_results": ("--limit", "i"), "min_relevance": ("--min-relevance", "f"),
        },
    )  # fmt: skip
    if _bool("regex", args.get("regex", False)):
        argv.append("--regex")
    return [*argv, *_positional(_text(args, "query"))]


def _write(args: Args, ghost: str | None) -> list[str]:
    writes = args["writes"]
    if not isinstance(writes, list):
        raise InvalidInput("writes must be an array of memory_writes objects")
    scope = "shared" if _bool("shared", args.get("shared", False)) else "private"
    # The document goes through stdin (runner.py hands `STDIN` over); see STDIN_MARK.
    return ["write", "--scope", scope, STDIN_MARK + json.dumps(writes, ensure_ascii=False)]


def _create(args: Args, ghost: str | None) -> list[str]:
    scope = args.get("scope", "private")
    argv = ["note", "create", "--title", _text(args, "title"), "--type", _text(args, "type")]
    argv += ["--scope", _scope(scope, ("shared", "private", "diary", "project"))]
    argv += _opts(
        args,
        {
            "project": ("--project", "s"), "parent": ("--parent", "s"), "tags": ("--tag", "l"),
            "aliases": ("--alias", "l"), "source": ("--source", "s"), "trust_score": ("--trust", "f"),
            "confidence": ("--confidence", "f"), "importance": ("--importance", "f"), "ttl_days": ("--ttl-days", "f"),
        },
    )  # fmt: skip
    return [*argv, *_body_flag(args.get("body", ""))]


def _body_flag(body: Any, flag: str = "--body") -> list[str]:
    if not isinstance(body, str):
        raise InvalidInput("body must be a string")
    # "-" would mean stdin on the command line: hand it over through stdin instead.
    return [f"{flag}=-", STDIN_MARK + body] if body == "-" else [f"{flag}={body}"]


def _update(args: Args, ghost: str | None) -> list[str]:
    argv = ["note", "update", *_opts(args, {"title": ("--title", "s"), "replace_section": ("--replace-section", "s")})]
    sets = args.get("set", {})
    if not isinstance(sets, Mapping):
        raise InvalidInput("set must be an object of front matter fields")
    for key, value in sets.items():
        text = "" if value is None else value if isinstance(value, str) else json.dumps(value)
        argv += ["--set", f"{key}={text}"]
    argv += _opts(args, {"add_tags": ("--add-tag", "l"), "remove_tags": ("--remove-tag", "l")})
    if "body" in args and "append" in args:
        raise InvalidInput("use either body or append, not both")
    if "body" in args:
        argv += _body_flag(args["body"])
    if "append" in args:
        argv += _body_flag(args["append"], "--append")
    return [*argv, *_expect(args), *_positional(_ref(args))]


def _validate(args: Args, ghost: str | None) -> list[str]:
    by = args.get("validated_by") or f"{ghost or 'anonymous'}/{args.get('model') or 'unknown'}"
    argv = ["note", "validate", "--by", str(by), *_opts(args, {"trust_score": ("--trust", "f")})]
    return [*argv, *_expect(args), *_positional(_ref(args))]


def _comment(args: Args, ghost: str | None) -> list[str]:
    text = _text(args, "comment")
    argv = ["note", "comment", *_opts(args, {"model": ("--model", "s")})]
    argv += ["--text=-", STDIN_MARK + text] if text == "-" else [f"--text={text}"]
    return [*argv, *_expect(args), *_positional(_ref(args))]


def _delete(args: Args, ghost: str | None) -> list[str]:
    return ["note", "delete", *_expect(args), *_positional(_ref(args))]


def _save(args: Args, ghost: str | None) -> list[str]:
    from vaultmem.services.capture import capture_title

    content = _text(args, "content")
    if not content.strip():
        raise InvalidInput("content is empty: nothing to save")
    scope = _scope(args.get("scope", "private"), ("shared", "private", "project"))
    argv = ["note", "create", "--title", capture_title(content), "--type", str(args.get("type", "fact"))]
    argv += ["--scope", scope, *_opts(args, {"tags": ("--tag", "l"), "project": ("--project", "s")})]
    return [*argv, *_body_flag(content)]


def _save_update(args: Args, ghost: str | None) -> list[str]:
    return ["note", "update", *_body_flag(_text(args, "content")), *_positional(_ref(args))]


# An argv item starting with this is not an argument: runner.py passes the rest as stdin.
STDIN_MARK = "\x00stdin:"


# --- short texts for the model ----------------------------------------------------------------


def _search_text(data: Any) -> str:
    lines = [f"{data.get('returned', 0)} results ({data.get('mode')})"]
    for r in data.get("results", []):
        s = r.get("summary", {})
        lines.append(f"- {s.get('title')} [{s.get('id')}] {s.get('path')} score {s.get('score')}")
    for w in data.get("warnings") or []:
        lines.append(f"note: {w}")
    return "\n".join(lines)


def _query_text(data: Any) -> str:
    lines = [f"{len(data.get('matches', []))} matches of {data.get('total_searched')} notes"]
    lines += [f"- {m.get('path')} relevance {m.get('relevance')}" for m in data.get("matches", [])]
    return "\n".join(lines)


def _get_text(data: Any) -> str:
    note = data.get("note", {})
    return f"{note.get('title')} [{note.get('id')}] {note.get('path')} v{note.get('version')}\n\n{data.get('body', '')}"


def _ref_text(data: Any) -> str:
    topic = data.get("topic") or {}
    head = f"topic {topic.get('title') if isinstance(topic, dict) else topic}: {len(data.get('results', []))} results"
    return "\n".join(
        [head, *(f"- {r.get('summary', {}).get('path')}" for r in data.get("results", []))],
    )


def _write_text(data: Any) -> str:
    return f"saved: id {data.get('id')}, path {data.get('path')}, version {data.get('version')}"


REF = "Note id (or path/title)."
_OPTS = {
    "type": "object",
    "properties": {
        "max_results": INT,
        "bm25_weight": N,
        "embedding_weight": N,
        "rrf_k": N,
        "graph_depth": INT,
        "include_links_in": B,
        "include_links_out": B,
        "include_parent": B,
        "trust_bias": N,
        "budget_tokens": INT,
        "mode": {"enum": ["hybrid", "bm25", "vector"]},
        "tags": L,
        "types": L,
        "min_score": N,
    },
}
_SEARCH_ALIASES = {"q": "query", "text": "query", **dict.fromkeys(LIMIT_ALIASES, "max_results")}
_REF_ALIASES = {"id": "note_id", "ref": "note_id", "note": "note_id"}
_WRITE_KEYS = ("id", "path", "version")

TOOLS: tuple[Tool, ...] = (
    Tool(
        "memory_search",
        "Hybrid search (BM25 + vectors) of the notes you may see, with linked notes. Use it before answering from memory.",
        {"query": S, "scope": SCOPE, "options": _OPTS},
        ("query",),
        _search,
        ("query", "mode", "results", "returned", "tokens_used", "search_time_ms"),
        read_only=True,
        idempotent=True,
        aliases=_SEARCH_ALIASES,
        text=_search_text,
    ),
    Tool(
        "memory_get",
        "One note in full (body, metadata, links) by id, path, title or alias.",
        {"note_id_or_title": S, "scope": SCOPE},
        ("note_id_or_title",),
        _get,
        ("note", "body", "tags", "links", "comments"),
        read_only=True,
        idempotent=True,
        aliases={k: "note_id_or_title" for k in ("id", "note_id", "ref", "title", "path", "note")},
        text=_get_text,
    ),
    Tool(
        "memory_capture",
        "Store raw text in the inbox for later curation.",
        {"payload": S, "scope": {"enum": ["private_only", "shared_only"]}, "tags": L, "source": S},
        ("payload",),
        _capture,
        ("id", "path"),
        aliases={"text": "payload", "content": "payload"},
    ),
    Tool(
        "reference_search",
        "Find the topic note for `topic`, then search the files it lists (docs, code) for `question`.",
        {"topic": S, "question": S, "options": {"type": "object", "properties": {"max_results": INT, "rrf_k": N}}},
        ("topic", "question"),
        _reference,
        ("topic", "results"),
        read_only=True,
        idempotent=True,
        aliases={"query": "question", "q": "question", **dict.fromkeys(LIMIT_ALIASES, "max_results")},
        text=_ref_text,
    ),
    Tool(
        "memory_query",
        "Grep-style keyword (or regex) query over the note files, with type, scope and date filters.",
        {
            "query": S,
            "types": L,
            "memory_type": S,
            "scope": SCOPE,
            "since": S,
            "until": S,
            "max_results": INT,
            "min_relevance": N,
            "regex": B,
        },
        ("query",),
        _query,
        ("matches", "query_summary", "total_searched", "search_time_ms"),
        read_only=True,
        idempotent=True,
        aliases={"q": "query", "type": "types", **dict.fromkeys(LIMIT_ALIASES, "max_results")},
        text=_query_text,
    ),
    Tool(
        "memory_write",
        "Ingest memory_writes items ({type: episodic|semantic|conversation, content, ...}) as notes.",
        {"writes": {"type": "array", "items": {"type": "object"}}, "shared": B},
        ("writes",),
        _write,
        ("written", "duplicates", "rejected"),
        aliases={"memory_writes": "writes", "items": "writes"},
    ),
    Tool(
        "memory_note_create",
        "Create a structured note; returns its stable id.",
        {
            "title": S,
            "type": S,
            "scope": {"enum": ["shared", "private", "diary", "project"]},
            "body": S,
            "project": S,
            "parent": S,
            "tags": L,
            "aliases": L,
            "source": S,
            "trust_score": N,
            "confidence": N,
            "importance": N,
            "ttl_days": N,
        },
        ("title", "type", "scope"),
        _create,
        _WRITE_KEYS,
        aliases={"content": "body", "text": "body", "trust": "trust_score", "tag": "tags"},
        text=_write_text,
    ),
    Tool(
        "memory_note_update",
        "Patch a note: title, front matter (`set`), tags, body, append or one section.",
        {
            "note_id": S,
            "title": S,
            "set": {"type": "object"},
            "add_tags": L,
            "remove_tags": L,
            "body": S,
            "append": S,
            "replace_section": S,
            "expect_version": INT,
        },
        ("note_id",),
        _update,
        _WRITE_KEYS,
        aliases={**_REF_ALIASES, "content": "body"},
        text=_write_text,
    ),
    Tool(
        "memory_note_validate",
        "Record that you checked a note; optionally set its trust_score.",
        {"note_id": S, "model": S, "trust_score": N, "validated_by": S, "expect_version": INT},
        ("note_id",),
        _validate,
        ("id", "version", "last_validated_at", "trust_score"),
        aliases={**_REF_ALIASES, "trust": "trust_score", "by": "validated_by"},
    ),
    Tool(
        "memory_note_comment",
        "Append a comment to a note.",
        {"note_id": S, "comment": S, "model": S, "expect_version": INT},
        ("note_id", "comment"),
        _comment,
        ("id", "version", "comments"),
        aliases={**_REF_ALIASES, "text": "comment"},
    ),
    Tool(
        "memory_note_delete",
        "Move a note to the trash (restorable with `vaultmem trash restore`).",
        {"note_id": S, "expect_version": INT},
        ("note_id",),
        _delete,
        ("id", "trashed_to"),
        destructive=True,
        aliases=_REF_ALIASES,
    ),
    Tool(
        "memory_save",
        "Remember free text (a fact, preference, decision); returns a stable note id for update/delete.",
        {"content": S, "tags": L, "scope": {"enum": ["private", "shared", "project"]}, "project": S},
        ("content",),
        _save,
        _WRITE_KEYS,
        aliases={"text": "content", "note": "content", "tag": "tags"},
        text=_write_text,
    ),
    Tool(
        "memory_update",
        "Replace the text of a note saved before, keeping its id.",
        {"note_id": S, "content": S},
        ("note_id", "content"),
        _save_update,
        _WRITE_KEYS,
        aliases={**_REF_ALIASES, "text": "content"},
        text=_write_text,
    ),
    Tool(
        "memory_delete",
        "Forget a note by id (moved to the trash).",
        {"note_id": S},
        ("note_id",),
        _delete,
        ("id", "trashed_to"),
        destructive=True,
        aliases=_REF_ALIASES,
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}


def split_stdin(argv: list[str]) -> tuple[list[str], str]:
    """The command line without the stdin marker, and the stdin text it carried."""
    stdin = ""
    out = []
    for arg in argv:
        if arg.startswith(STDIN_MARK):
            stdin = arg[len(STDIN_MARK) :]
        else:
            out.append(arg)
    if out and out[0] == "write" and stdin:
        out.append("-")
    return out, stdin
