"""Query building of tools/evalkit/make_sets.py on inline tldr pages (no corpora needed)."""

from __future__ import annotations

from tools.evalkit import make_sets as mk

GIT_COMMIT = """# git commit

> Commit files to the repository.
> More information: <https://git-scm.com/docs/git-commit>.

- Commit staged files to the repository with a message read from `git-commit`'s editor:

`git commit`

- Commit staged files:

`git commit {{path/to/file}}`

- Clone nothing, but mention GitLab and `gitk`:

`git commit --dry-run`
"""

TAR = """# tar

> Archiving utility.
> Often combined with a compression method, such as `gzip`.

- [c]reate an archive and write it to a [f]ile:

`tar cf {{path/to/target.tar}} {{path/to/file1}}`

- Display help:

`tar --help`
"""

MERGE_INTO = """# git merge-into

> Merge a source branch into a specific destination branch (the `git` extras).

- Merge a source branch into a specific destination branch:

`git merge-into {{source_branch}} {{destination_branch}}`
"""


def _queries(stem: str, text: str) -> dict[str, str]:
    sources, _ = mk.page_queries(stem, text)
    return {line: query for _, line, query in sources}


def test_the_command_name_is_removed_bare_in_backticks_and_as_parts() -> None:
    queries = _queries("git-commit", GIT_COMMIT)
    assert queries["Commit files to the repository."] == "files to the repository"
    assert (
        queries["Commit staged files to the repository with a message read from `git-commit`'s editor:"]
        == "staged files to the repository with a message read from editor"
    )
    # Whole words only: "GitLab" and `gitk` are other names and stay.
    assert queries["Clone nothing, but mention GitLab and `gitk`:"] == "clone nothing but mention gitlab and gitk"


def test_queries_under_three_words_and_page_furniture_are_skipped() -> None:
    git = _queries("git-commit", GIT_COMMIT)
    assert "Commit staged files:" not in git  # "staged files": two words
    assert not any(line.startswith("More information") for line in git)
    tar = _queries("tar", TAR)
    assert "Archiving utility." not in tar  # two words
    assert "Display help:" not in tar
    # Only the first description line is a source; mnemonic brackets are dropped.
    assert tar == {"[c]reate an archive and write it to a [f]ile:": "create an archive and write it to a file"}


def test_common_words_in_a_hyphenated_name_are_not_removed() -> None:
    queries = _queries("git-merge-into", MERGE_INTO)
    assert (
        queries["Merge a source branch into a specific destination branch:"]
        == "a source branch into a specific destination branch"
    )


def test_make_query_normalises_case_and_punctuation() -> None:
    variants = mk.name_variants("python3", mk.parse_page("# python3\n\n- Run `python3` scripts:\n\n`python3 x.py`\n"))
    assert "python" in variants and "python3" in variants
    assert (
        mk.make_query('Start the Python REPL (read-eval-print "loop")!', variants)
        == "start the repl read-eval-print loop"
    )
    assert mk.make_query("Start Python3 now:", variants) is None  # "start now"
    assert mk.make_query("Embed Python in a C++ or C# program.", variants) == "embed in a c++ or c# program"


def test_every_page_giving_the_same_query_is_relevant_and_the_build_is_seeded() -> None:
    def page(name: str, example: str) -> str:
        return f"# {name}\n\n> A tool.\n\n- {example}:\n\n`{name} status`\n"

    pages = {
        ("common", "foo"): page("foo", "Show the foo status of the current machine"),
        ("linux", "foo"): page("foo", "Show the `foo` status of the current machine"),
        ("osx", "bar"): page("bar", "Show the status of the current machine"),
        ("common", "baz"): page("baz", "Show the baz status of every machine"),
    }
    records, _ = mk.build_tldr(pages, seed=3, n=2, tune_fraction=0.5)
    again, _ = mk.build_tldr(pages, seed=3, n=2, tune_fraction=0.5)
    assert records == again
    by_query = {record["query"]: record for record in records}
    assert set(by_query) == {"show the status of the current machine", "show the status of every machine"}
    shared = by_query["show the status of the current machine"]
    assert shared["relevant"][0] == shared["source"]["page"]
    assert sorted(shared["relevant"]) == [
        "shared/tldr/common/foo.md",
        "shared/tldr/linux/foo.md",
        "shared/tldr/osx/bar.md",
    ]
    assert by_query["show the status of every machine"]["relevant"] == ["shared/tldr/common/baz.md"]
    assert sorted(record["split"] for record in records) == ["test", "tune"]


def test_split_ids_is_a_seeded_partition() -> None:
    ids = [str(i) for i in range(1, 226)]
    split = mk.split_ids(ids, seed=11, tune_fraction=0.5)
    assert split == mk.split_ids(ids, seed=11, tune_fraction=0.5)
    assert len(split["tune"]) == 112 and len(split["test"]) == 113
    assert sorted(split["tune"] + split["test"], key=int) == ids
    assert split != mk.split_ids(ids, seed=12, tune_fraction=0.5)
