"""Table tests of index/chunking.py `chunk_note`.

The documented rule: a chunk is one section's paragraphs packed up to the budget; the
heading path ("H1 > H2", empty before the first heading) says where it is; paragraphs too
long on their own split at sentences, then at words; code fences never start a section;
at most MAX_CHUNKS_PER_NOTE chunks. Token estimate: one per word or punctuation mark, a
word of 8+ characters one more per 8 characters. Chunk text is the note's own text,
paragraphs joined by a blank line. `note_chunks` puts front-matter prose first and makes
a body the model reads whole (`fits`, the embedder's tokenizer) one chunk.
"""

from __future__ import annotations

import pytest

from vaultmem.index.chunking import (
    BUDGET,
    MAX_CHUNKS_PER_NOTE,
    MAX_TOKENS,
    chunk_note,
    distinct_chunks,
    estimate_tokens,
    note_chunks,
)

# (body, budget or None for the default) -> [(heading path, text), ...]
CASES = [
    pytest.param("", None, [], id="empty-body"),
    pytest.param("  \n\n\t\n", None, [], id="whitespace-only"),
    pytest.param("Hello world.", None, [("", "Hello world.")], id="one-paragraph-no-heading"),
    pytest.param("line one\nline two", None, [("", "line one\nline two")], id="lines-of-a-paragraph-kept"),
    pytest.param("A b.\n\nC d.", None, [("", "A b.\n\nC d.")], id="paragraphs-that-fit-share-a-chunk"),
    pytest.param("one two\n\nthree four", 4, [("", "one two\n\nthree four")], id="budget-exactly-met"),
    pytest.param(
        "one two\n\nthree four", 3, [("", "one two"), ("", "three four")], id="paragraph-boundary-over-budget"
    ),
    pytest.param("a\n \t\nb", 1, [("", "a"), ("", "b")], id="blank-line-with-spaces-splits-paragraphs"),
    pytest.param(
        "# A\nalpha\n## B\nbeta\n# C\ngamma",
        None,
        [("A", "alpha"), ("A > B", "beta"), ("C", "gamma")],
        id="heading-path-nests-and-resets",
    ),
    pytest.param(
        "# A\n## B\nb\n## C\nc", None, [("A > B", "b"), ("A > C", "c")], id="sibling-headings-replace-each-other"
    ),
    pytest.param(
        "## X\nx\n# Y\ny\n### Z\nz",
        None,
        [("X", "x"), ("Y", "y"), ("Y > Z", "z")],
        id="skipped-heading-levels",
    ),
    pytest.param("intro\n# H\nbody", None, [("", "intro"), ("H", "body")], id="text-before-first-heading"),
    pytest.param("# A\n# B\ntext", None, [("B", "text")], id="empty-section-gives-no-chunk"),
    pytest.param("# A\n\n\n# B\n", None, [], id="headings-only"),
    pytest.param("# A\nx\n# B\ny", 200, [("A", "x"), ("B", "y")], id="sections-never-share-a-chunk"),
    pytest.param("## Title ##\ntext", None, [("Title", "text")], id="closing-hashes-not-in-heading"),
    pytest.param("#   Spaced   \ntext", None, [("Spaced", "text")], id="heading-text-trimmed"),
    pytest.param("#tag text", None, [("", "#tag text")], id="hashtag-without-space-is-not-a-heading"),
    pytest.param("####### seven", None, [("", "####### seven")], id="seven-hashes-is-not-a-heading"),
    pytest.param(
        "# A\n```\n# not a heading\n```\nafter",
        None,
        [("A", "```\n# not a heading\n```\nafter")],
        id="backtick-fence-never-starts-a-section",
    ),
    pytest.param("~~~\n## no\n~~~", None, [("", "~~~\n## no\n~~~")], id="tilde-fence-never-starts-a-section"),
    pytest.param("```python\n# comment\n", None, [("", "```python\n# comment")], id="unclosed-fence-runs-to-the-end"),
    pytest.param(
        "```\n# in\n```\n# Out\ntext",
        None,
        [("", "```\n# in\n```"), ("Out", "text")],
        id="heading-after-a-closed-fence-counts",
    ),
    pytest.param(
        "```\n~~~\n# inside\n```\nafter",
        None,
        [("", "```\n~~~\n# inside\n```\nafter")],
        id="tilde-line-inside-backtick-fence-does-not-close-it",
    ),
    pytest.param(
        "````md\n```\n# inside\n```\n````\nafter",
        None,
        [("", "````md\n```\n# inside\n```\n````\nafter")],
        id="shorter-fence-inside-a-longer-one-does-not-close-it",
    ),
    pytest.param(
        "One two three. Four five six.",
        4,
        [("", "One two three."), ("", "Four five six.")],
        id="long-paragraph-splits-at-sentences",
    ),
    pytest.param(
        "One two. Three four. Five six seven eight.",
        6,
        [("", "One two. Three four."), ("", "Five six seven eight.")],
        id="sentences-pack-greedily-up-to-budget",
    ),
    pytest.param(
        "a b c d e f g h i j",
        4,
        [("", "a b c d"), ("", "e f g h"), ("", "i j")],
        id="sentence-over-budget-splits-at-words",
    ),
    pytest.param(
        "abcdefghijklmnop\n\nxy", 3, [("", "abcdefghijklmnop"), ("", "xy")], id="16-char-word-counts-3-tokens"
    ),
    pytest.param("abcdefghijklmnop\n\nxy", 4, [("", "abcdefghijklmnop\n\nxy")], id="16-char-word-plus-1-fits-4"),
    pytest.param(
        " ".join(["w"] * 250),
        None,
        [("", " ".join(["w"] * 200)), ("", " ".join(["w"] * 50))],
        id="default-window-200-tokens",
    ),
    pytest.param(
        "\n".join(f"# H{i}\nt" for i in range(MAX_CHUNKS_PER_NOTE + 44)),
        None,
        [(f"H{i}", "t") for i in range(MAX_CHUNKS_PER_NOTE)],
        id="chunks-capped-per-note",
    ),
]


@pytest.mark.parametrize(("body", "budget", "expected"), CASES)
def test_chunk_note(body: str, budget: int | None, expected: list[tuple[str, str]]) -> None:
    chunks = chunk_note(body) if budget is None else chunk_note(body, budget)
    assert [(c.heading, c.text) for c in chunks] == expected
    assert [c.index for c in chunks] == list(range(len(expected)))
    limit = BUDGET if budget is None else budget
    assert all(estimate_tokens(c.text) <= limit for c in chunks)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        pytest.param("", 0, id="empty"),
        pytest.param("one two", 2, id="words"),
        pytest.param("Hi, there!", 4, id="punctuation-counts"),
        pytest.param("abcdefg", 1, id="7-chars-one-piece"),
        pytest.param("abcdefgh", 2, id="8-chars-two-pieces"),
        pytest.param("abcdefghijklmnop", 3, id="16-chars-three-pieces"),
    ],
)
def test_estimate_tokens(text: str, tokens: int) -> None:
    # the estimate the chunk budget is measured in (module docstring rule)
    assert estimate_tokens(text) == tokens


TWO = " ".join(["w"] * 250)  # two chunks by the budget (see default-window-200-tokens)
HEADED = "# A\nalpha\n# B\nbeta"  # two sections, two chunks


def always(_text: str) -> bool:
    return True


def never(_text: str) -> bool:
    return False


# (body, prose, fits) -> [(heading, text), ...]
NOTE_CASES = [
    pytest.param(TWO, "", None, [("", " ".join(["w"] * 200)), ("", " ".join(["w"] * 50))], id="no-window-check"),
    pytest.param(
        TWO, "", never, [("", " ".join(["w"] * 200)), ("", " ".join(["w"] * 50))], id="too-long-for-the-model"
    ),
    pytest.param(TWO, "", always, [("", TWO)], id="read-whole-one-chunk"),
    pytest.param(HEADED, "", always, [("", HEADED)], id="whole-keeps-its-headings-as-text"),
    pytest.param(HEADED, "", never, [("A", "alpha"), ("B", "beta")], id="sections-when-it-does-not-fit"),
    pytest.param(TWO, "A summary.", always, [("", "A summary."), ("", TWO)], id="prose-first-then-whole-body"),
    pytest.param("Short.", "", always, [("", "Short.")], id="one-chunk-anyway"),
    pytest.param("", "", always, [("", "")], id="empty-note-title-only-chunk"),
]


@pytest.mark.parametrize(("body", "prose", "fits", "expected"), NOTE_CASES)
def test_note_chunks(body: str, prose: str, fits: object, expected: list[tuple[str, str]]) -> None:
    chunks = note_chunks(body, prose, "Title", fits)  # type: ignore[arg-type]
    assert [(c.heading, c.text) for c in chunks] == expected
    assert [c.index for c in chunks] == list(range(len(expected)))


def test_the_window_check_sees_the_title_and_is_asked_only_when_it_matters() -> None:
    asked: list[str] = []

    def fits(text: str) -> bool:
        asked.append(text)
        return True

    note_chunks("Short.", "", "Title", fits)
    note_chunks(" ".join(["w"] * (2 * MAX_TOKENS + 1)), "", "Title", fits)  # far past any window
    assert asked == []
    note_chunks(TWO, "", "My title", fits)
    assert asked == [f"My title\n{TWO}"]  # the text embedded: title, then the whole body


@pytest.mark.parametrize(
    ("body", "prose", "kept"),
    [
        ("lavender " * 200_000, "", [0]),  # one word repeated: up to 256 equal chunks before
        ("## A\nsame text\n\n## B\nsame text\n", "", [0, 1]),  # headings differ: two texts
        (("x " * 150 + "\n\n") * 6, "", [0]),  # paragraphs repeated
        ("Body that is not the description.\n", "Body that is not the description.", [0]),  # prose = body
        ("one\n\n" + " ".join(f"w{i}" for i in range(400)), "", None),  # different texts: every chunk kept
    ],
    ids=["one-word", "headings", "paragraphs", "prose-repeats-body", "distinct"],
)
def test_a_text_a_note_already_embeds_is_stored_once(body: str, prose: str, kept: list[int] | None) -> None:
    chunks = note_chunks(body, prose, "Title")
    out = distinct_chunks(chunks, "Title")
    texts = [text for _, text in out]
    assert len(set(texts)) == len(texts) and texts == [c.embed_text("Title") for c, _ in out]
    assert [c.index for c, _ in out] == (kept if kept is not None else [c.index for c in chunks])
    assert {c.embed_text("Title") for c in chunks} == set(texts)  # no text lost
