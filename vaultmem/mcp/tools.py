"""The MCP tools, stated once, without the SDK: names, input schemas, the aliases models
guess, annotations, and for each tool the typed use case a call becomes.

A call's arguments are checked against the tool's input schema (arguments.py) and turned
into a typed request for the very use case the CLI runs (services/): a `Read` the watcher
may answer (services/reads.py) or a `Write` run by the server itself (runner.py). Identity
is never an argument: the server passes the ghost its transport decided, and no value here
can name another ghost, another vault or a file.

Kept small on purpose: the whole `tools/list` answer must stay under 2,500 tokens
(characters / 4; tests/mcp/test_tools.py), so descriptions are one or two sentences and
rarely-needed options are accepted but not described at length.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vaultmem.errors import InvalidInput
from vaultmem.mcp.arguments import check
from vaultmem.mcp.texts import get_text, query_text, ref_text, search_text, write_text
from vaultmem.models import Result
from vaultmem.search.filters import DEFAULT_MODE, MODES, QUERY_LIMIT, QUERY_MIN_RELEVANCE, SEED_SCOPES
from vaultmem.services.app import App
from vaultmem.services.query import QueryRequest
from vaultmem.services.reads import GetRequest, ReferenceRequest
from vaultmem.services.search import FilterSpec, SearchRequest

Args = dict[str, Any]

S: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
N: dict[str, Any] = {"type": "number"}
B: dict[str, Any] = {"type": "boolean"}
L: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
# memory_search's scope names (seed 003); search/filters.py reads them as the CLI's.
SCOPE: dict[str, Any] = {"enum": list(SEED_SCOPES)}

# Names models commonly use for a parameter, by tool family; applied before the check for
# unknown parameters. `top_k`, `limit`, `k`, `n` all mean "at most this many results".
LIMIT_ALIASES = ("top_k", "limit", "k", "n", "max_results", "num_results")
# Given as an object, their fields are the tool's own (`options.max_results`, `patch.body`).
NESTED = ("options", "patch")


@dataclass(frozen=True, slots=True)
class Read:
    """A read use case (services/reads.py request): the watcher answers it when one runs."""

    request: Any


@dataclass(frozen=True, slots=True)
class Write:
    """A use case that writes note files: run by the server itself, as the CLI runs it."""

    run: Callable[[App], Result]


Plan = Read | Write


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...]
    plan_for: Callable[[Args, str | None], Plan]
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

    def plan(self, arguments: Any, ghost: str | None) -> Plan:
        """The typed use case these arguments ask for, acting as `ghost` (the transport's)."""
        return self.plan_for(self.normalize(arguments or {}), ghost)

    def normalize(self, arguments: Any) -> Args:
        """Aliases applied, nested `options`/`patch` flattened, unknown names refused, every
        value checked against its schema."""
        if not isinstance(arguments, Mapping):
            raise InvalidInput(f"{self.name}: arguments must be an object")
        args: Args = {}
        given: dict[str, str] = {}
        for key, value in arguments.items():
            if key in NESTED and "properties" in self.properties.get(key, {"properties": None}):
                if not isinstance(value, Mapping):
                    raise InvalidInput(f"{self.name}: {key} must be an object")
                for k, v in value.items():
                    self._put(args, given, str(k), v)
            else:
                self._put(args, given, str(key), value)
        missing = [name for name in self.required if args.get(name) in (None, "")]
        if missing:
            raise InvalidInput(
                f"{self.name}: missing or empty required parameter {', '.join(missing)}; accepted: {', '.join(self.accepted)}"
            )
        return args

    @property
    def properties_flat(self) -> dict[str, Any]:
        return {**self.properties, **self.properties.get("options", {}).get("properties", {})}

    def _put(self, args: Args, given: dict[str, str], key: str, value: Any) -> None:
        name = self.aliases.get(key, key)
        schema = self.properties_flat.get(name)
        if schema is None or name == "options":
            raise InvalidInput(f"{self.name}: unknown parameter {key!r}; accepted: {', '.join(self.accepted)}")
        if name in given:
            raise InvalidInput(f"{self.name}: {name} is given twice (as {given[name]!r} and {key!r})")
        given[name] = key
        if value is not None:
            args[name] = check(name, schema, value)


# --- the use cases ---------------------------------------------------------------------------


def _search(a: Args, ghost: str | None) -> Plan:
    return Read(
        SearchRequest(
            query=a["query"], mode=a.get("mode", DEFAULT_MODE), limit=a.get("max_results"),
            filters=FilterSpec(scope=a.get("scope"), tags=a.get("tags", ()), types=a.get("types", ())),
            bm25_weight=a.get("bm25_weight"), embedding_weight=a.get("embedding_weight"), rrf_k=a.get("rrf_k"),
            trust_bias=a.get("trust_bias"), graph_depth=a.get("graph_depth"),
            include_parent=a.get("include_parent", True), include_links_in=a.get("include_links_in", True),
            include_links_out=a.get("include_links_out", True), budget_tokens=a.get("budget_tokens"),
            min_score=a.get("min_score"),
        )
    )  # fmt: skip


def _get(a: Args, ghost: str | None) -> Plan:
    return Read(GetRequest(a["note_id_or_title"], a.get("scope")))


def _reference(a: Args, ghost: str | None) -> Plan:
    return Read(ReferenceRequest(a["topic"], a["question"], a.get("max_results"), a.get("rrf_k")))


def _query(a: Args, ghost: str | None) -> Plan:
    return Read(
        QueryRequest(
            query=a["query"], types=tuple(a.get("types", ())), memory_type=a.get("memory_type"),
            scope=a.get("scope"), since=a.get("since"), until=a.get("until"),
            limit=a.get("max_results", QUERY_LIMIT), min_relevance=a.get("min_relevance", QUERY_MIN_RELEVANCE), regex=a.get("regex", False),
        )
    )  # fmt: skip


def _capture(a: Args, ghost: str | None) -> Plan:
    from vaultmem.services.capture import capture

    scope = "shared" if a.get("scope") == "shared_only" else "private"
    return Write(lambda app: capture(app, a["payload"], scope, a.get("tags", ()), a.get("source")))


def _write(a: Args, ghost: str | None) -> Plan:
    from vaultmem.services.writes import ingest

    # Each item was checked as an object nested at most arguments.MAX_DEPTH levels.
    return Write(lambda app: ingest(app, a["writes"], shared=a.get("shared", False)))


def _create(a: Args, ghost: str | None) -> Plan:
    from vaultmem.services.notes import NewNote, create_note

    spec = NewNote(
        title=a["title"], type=a["type"], scope=a["scope"],
        project=a.get("project"), body=a.get("body", ""), parent=a.get("parent"), tags=a.get("tags", ()),
        aliases=a.get("aliases", ()), source=a.get("source"), trust=a.get("trust_score"),
        confidence=a.get("confidence"), importance=a.get("importance"), ttl_days=a.get("ttl_days"),
    )  # fmt: skip
    return Write(lambda app: create_note(app, spec))


def _update(a: Args, ghost: str | None) -> Plan:
    from vaultmem.services.notes import NotePatch
    from vaultmem.services.retitles import update_named

    if "body" in a and "append" in a:
        raise InvalidInput("use either body or append, not both")
    patch = NotePatch(
        title=a.get("title"), fields=a.get("set", {}), add_tags=a.get("add_tags", ()),
        remove_tags=a.get("remove_tags", ()), body=a.get("body"), append=a.get("append"),
        replace_section=a.get("replace_section"),
    )  # fmt: skip
    # No version stated: adding to a note a person edited is fine, replacing its text is not.
    return Write(lambda app: update_named(app, a["note_id"], patch, a.get("expect_version"), refuse_unseen_edits=True))


def _validate(a: Args, ghost: str | None) -> Plan:
    from vaultmem.services.notes import validate_note

    # Who validated is the transport's ghost, never a value the caller sends.
    by = f"{ghost or 'anonymous'}/{a.get('model') or 'unknown'}"
    return Write(
        lambda app: validate_note(
            app, a["note_id"], by, a.get("trust_score"), a.get("expect_version"), refuse_unseen_edits=True
        )
    )


def _comment(a: Args, ghost: str | None) -> Plan:
    from vaultmem.services.notes import comment_note

    return Write(
        lambda app: comment_note(
            app, a["note_id"], a["comment"], a.get("model"), a.get("expect_version"), unseen_caller=True
        )
    )


def _delete(a: Args, ghost: str | None) -> Plan:
    from vaultmem.services.notes import delete_note

    return Write(lambda app: delete_note(app, a["note_id"], a.get("expect_version")))


def _save(a: Args, ghost: str | None) -> Plan:
    from vaultmem.services.capture import capture_title
    from vaultmem.services.notes import NewNote, create_note

    content = a["content"]
    if not content.strip():
        raise InvalidInput("content is empty: nothing to save")
    spec = NewNote(
        title=capture_title(content), type="fact", scope=a.get("scope", "private"),
        project=a.get("project"), body=content, tags=a.get("tags", ()),
    )  # fmt: skip
    return Write(lambda app: create_note(app, spec))


def _save_update(a: Args, ghost: str | None) -> Plan:
    from vaultmem.services.notes import NotePatch, update_note

    patch = NotePatch(body=a["content"])
    return Write(lambda app: update_note(app, a["note_id"], patch, a.get("expect_version"), refuse_unseen_edits=True))


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
        "mode": {"enum": list(MODES)},
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
        text=search_text,
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
        text=get_text,
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
        text=ref_text,
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
        text=query_text,
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
        text=write_text,
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
        text=write_text,
    ),
    Tool(
        "memory_note_validate",
        "Record that you checked a note; optionally set its trust_score.",
        {"note_id": S, "model": S, "trust_score": N, "expect_version": INT},
        ("note_id",),
        _validate,
        ("id", "version", "last_validated_at", "trust_score"),
        aliases={**_REF_ALIASES, "trust": "trust_score"},
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
        text=write_text,
    ),
    Tool(
        "memory_update",
        "Replace the text of a note saved before, keeping its id.",
        {"note_id": S, "content": S, "expect_version": INT},
        ("note_id", "content"),
        _save_update,
        _WRITE_KEYS,
        aliases={**_REF_ALIASES, "text": "content"},
        text=write_text,
    ),
    Tool(
        "memory_delete",
        "Forget a note by id (moved to the trash).",
        {"note_id": S, "expect_version": INT},
        ("note_id",),
        _delete,
        ("id", "trashed_to"),
        destructive=True,
        aliases=_REF_ALIASES,
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}
