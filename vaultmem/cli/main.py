"""The Typer application. Errors are translated here, once, into SPEC §6 exit codes."""

from __future__ import annotations

import itertools
import math
import re
import sys
import traceback
from typing import Any

import typer
from typer.core import TyperGroup

from vaultmem import __version__
from vaultmem.cli.common import GhostOpt, JsonOpt, ModelOpt, ReasonOpt, VaultOpt
from vaultmem.errors import InvalidInput, VaultmemError, environment_error

try:
    # Typer 0.2x vendors click: its parse errors derive from TyperException and are not
    # instances of the separately installed `click`'s ClickException.
    from typer import TyperException as ParseError
except ImportError:  # older Typer builds on click itself
    from click import ClickException as ParseError  # type: ignore[assignment]


def _check_utf8(argv: list[str]) -> None:
    """Arguments that are not valid UTF-8 arrive as lone surrogates; refuse them up front
    rather than fail while writing a note."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(f"argument {arg!r} is not valid UTF-8") from None


# Every top-level command: the module under vaultmem/cli that registers it, and its one-
# line help. Commands are built only when invoked, so `vaultmem --help` and each command
# start without constructing (and importing) all the others. tests/cli/test_docs.py holds
# this table equal to the commands' own help.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("vaults", "Create a new vault from the template: folders, vaultmem.toml, .gitignore, examples."),
    "ghost": ("vaults", "Register and list ghosts (agent identities)."),
    "note": ("notes", "Create, change, validate, comment on and delete notes."),
    "get": ("notes", "Show one note with its links (memory_get)."),
    "list": ("browse", "List notes, newest change first, with filters and pages."),
    "links": ("browse", "Show a note's links out and in, its parent and children, and dangling targets."),
    "tags": ("browse", "Count every tag in use (front matter and inline #tags; nested tags roll up)."),
    "orphans": ("browse", "List notes that nothing links to and that link nowhere."),
    "edit": ("editing", "Open a note in $VISUAL or $EDITOR, then report what changed and its lint problems."),
    "diary": ("editing", "Open or create the ghost's diary entry for a day (diary/<ghost>/YYYY-MM-DD.md)."),
    "capture": ("inbox", "Store raw text in the inbox for later curation (memory_capture)."),
    "inbox": ("inbox", "Curate captures into structured notes."),
    "write": ("inbox", "Ingest tool `memory_writes` (episodic, semantic, conversation) as notes."),
    "search": (
        "search",
        "Hybrid search (BM25 + vectors, fused into a calibrated relevance) with graph expansion (memory_search).",
    ),
    "query": ("query", "Grep-style search over the note files; needs no index (QueryMemory)."),
    "reference": ("query", "Search the files that topic notes list (docs, source code)."),
    "index": ("indexing", "Reconcile the vault into Whoosh, Chroma and the link graph."),
    "status": ("indexing", "Notes per scope, index freshness, embedding backend, watcher."),
    "watch": ("watch", "Keep every index in step with the files, and serve other commands while running."),
    "lint": ("lint", "Check every note: front matter, scopes, ids, types, ranges, links."),
    "review": ("review", "Digest of memory changes: who changed which note how, and what needs a person."),
    "commit": ("review", "Commit pending memory changes, one commit per ghost (a person's edits as theirs)."),
    "history": ("review", "The versions of one note across renames: when, who, what changed."),
    "revert": ("review", "Undo an agent's changes as a new change; a later edit of the same lines is a conflict."),
    "git": ("sync", "Set up git for memory that several clones write."),
    "sync": ("sync", "Commit pending memory changes, merge the upstream in (notes by the merge driver), push."),
    "merge-driver": ("sync", "git's merge driver for notes: front matter by key, the body three-way."),
    "fix-names": ("files", "Rename notes after their titles as Obsidian names files; every link to them is rewritten."),
    "trash": ("files", "Deleted notes: list them, bring one back."),
    "mcp": ("mcp", "Serve the memory tools over the Model Context Protocol (stdio, or HTTP with --http)."),
    "token": ("mcp", "Bearer tokens for `mcp --http`, one per ghost."),
}


def build_module_commands(module_name: str) -> dict[str, Any]:
    """The click commands one vaultmem/cli module registers, built through Typer."""
    import importlib

    module = importlib.import_module(f"vaultmem.cli.{module_name}")
    sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    module.register(sub)
    if len(sub.registered_commands) + len(sub.registered_groups) == 1:
        # Typer turns a lone command into the group itself; wrap it so it keeps its name.
        sub.callback()(lambda: None)
    group = typer.main.get_command(sub)
    _finite_floats(group)
    commands = dict(getattr(group, "commands", {}))
    from vaultmem.cli.examples import polish  # examples in --help, -n/-t/-s/-j, plain usage lines

    for name, command in commands.items():
        polish(name, command)
    return commands


_FINITE: dict[type, Any] = {}


def _finite_float_type(float_type: Any) -> Any:
    """A float parameter type that refuses `nan` and `inf` (Python's float() takes them) as
    invalid input (exit 5, as every out-of-range number is), so NaN never reaches a weight,
    a threshold or the JSON output."""
    base = type(float_type)
    if base not in _FINITE:

        def convert(self: Any, value: Any, param: Any, ctx: Any) -> Any:
            number = base.convert(self, value, param, ctx)
            if isinstance(number, float) and not math.isfinite(number):
                name = param.opts[0] if param is not None and param.opts else "a number"
                raise InvalidInput(f"invalid value for {name!r}: {value!r} is not a finite number")
            return number

        _FINITE[base] = type("FiniteFloatParamType", (base,), {"convert": convert})()
    return _FINITE[base]


def _finite_floats(command: Any) -> None:
    """Every float option and argument of a command (and of its subcommands) made finite."""
    for param in getattr(command, "params", ()):
        if type(param.type).__name__ == "FloatParamType":
            param.type = _finite_float_type(param.type)
    for sub in getattr(command, "commands", {}).values():
        _finite_floats(sub)


_JSON_CLUSTER = re.compile(r"-[hj]*j")  # -j, and -j first among short flags: -js shared, -jn5


def asks_for_json(argv: list[str]) -> bool:
    """Whether a command line asks for JSON, read before it is parsed, so that an error in
    parsing it is answered in JSON too. Options end at `--`: after it `--json` is text. Short
    flags may be joined (`-js shared` is `-j -s shared`); -j and -h are the only short
    flags that take no value, so a -j after any other letter is that option's value."""
    options = argv[: argv.index("--")] if "--" in argv else argv
    return (
        "--json" in options
        or "--format=json" in options
        or any(_JSON_CLUSTER.match(arg) for arg in options)
        or any(pair == ("--format", "json") for pair in itertools.pairwise(options))
    )


class VaultmemGroup(TyperGroup):
    """Builds commands on demand, runs one, and turns every outcome into an exit code and
    an error document."""

    _built: dict[str, Any] | None = None

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        if self._built is None:
            self._built = {}
        if cmd_name not in self._built:
            self._built.update(build_module_commands(COMMANDS[cmd_name][0]))
        return self._built.get(cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """A misspelled command suggests the closest ones (Typer's suggestion looks only at
        commands already built; these are built on demand)."""
        try:
            return super().resolve_command(ctx, args)
        except ParseError as exc:
            import difflib

            message = getattr(exc, "message", None)
            matches = difflib.get_close_matches(args[0], list(COMMANDS)) if args else []
            if matches and isinstance(message, str) and "Did you mean" not in message:
                exc.message = message.rstrip(".") + f". Did you mean {' or '.join(repr(m) for m in matches)}?"
            raise

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_) for name, (_, help_) in COMMANDS.items()])

    def main(  # type: ignore[override]
        self,
        args: list[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        from vaultmem.cli import output

        argv = list(sys.argv[1:] if args is None else args)
        json_mode = asks_for_json(argv)
        try:
            _check_utf8(argv)
            rv = super().main(argv, prog_name or "vaultmem", complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) and not isinstance(rv, bool) else 0
        except typer.Abort:
            output.error("interrupted", "interrupted", json_mode)
            code = 130
        except ParseError as exc:
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ == "NoArgsIsHelpError" and not json_mode:
                sys.stderr.write(exc.format_message().rstrip("\n") + "\n")  # bare `vaultmem note`
            else:
                message = (
                    "missing command; see --help" if type(exc).__name__ == "NoArgsIsHelpError" else exc.format_message()
                )
                output.error("usage", message, json_mode)
                if not json_mode and ctx is not None:
                    sys.stderr.write(f"Try '{ctx.command_path} --help' for help.\n")
            code = 2
        except VaultmemError as exc:
            details = {k: v for k, v in exc.details.items() if v is not None}
            output.error(exc.code, exc.message, json_mode, details)
            code = exc.exit_code
        except BrokenPipeError:
            code = 1
        except KeyboardInterrupt:
            output.error("interrupted", "interrupted", json_mode)
            code = 130
        except Exception as exc:
            known = environment_error(exc)  # a read-only or full disk: said plainly, no traceback
            if known is not None:
                output.error(known.code, known.message, json_mode)
                code = known.exit_code
            else:
                # The CLI edge is the one place that may catch everything: an agent must still
                # get one JSON document and exit 1 (internal failure); the traceback goes to stderr.
                traceback.print_exc(file=sys.stderr)
                output.error("internal", f"internal error: {type(exc).__name__}: {exc}", json_mode)
                code = 1
        if standalone_mode:
            sys.exit(code)
        return code


app = typer.Typer(
    cls=VaultmemGroup,
    name="vaultmem",
    help="Long-term memory for AI agents and their people, kept as a vault of plain markdown files.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"vaultmem {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def root(
    ctx: typer.Context,
    vault: VaultOpt = None,
    ghost: GhostOpt = None,
    json_: JsonOpt = False,
    model: ModelOpt = None,
    reason: ReasonOpt = None,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Options given here apply to every command (a command's own flags win)."""
    # Merged, not replaced: the watcher passes its App provider in obj (cli/common.py).
    ctx.obj = {
        **(ctx.obj if isinstance(ctx.obj, dict) else {}),
        "vault": vault,
        "ghost": ghost,
        "json": json_,
        "model": model,
        "reason": reason,
    }
