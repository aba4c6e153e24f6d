"""Snippets and near-duplicate detection. Pure functions over note text."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate

from vaultmem.index.tokens import NOSPACE_RE, words

_WORD_RE = re.compile(r"\w+", re.UNICODE)
# ASCII text split into `\w+` runs by str.translate and str.split: ~3x faster than the regex
# (every ASCII character `\w` does not match becomes a space; tests/unit/test_text.py checks).
_NOT_WORD_ASCII = {i: " " for i in range(128) if not (chr(i).isalnum() or chr(i) == "_")}
_SPLIT_RE = re.compile(r"(?=\s)(?:(?<=[.!?])\s+|\n+)")  # the lookahead: ~2x faster, same splits
# Leading list and heading markers and spacing, for str.lstrip: "#>-*+" and every
# character `\s` matches (= str.isspace(); tests/unit/test_text.py checks).
LEAD_CHARS = "#>-*+\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_GLUED = frozenset("#-*+")  # text when glued to a word: `#tag`, `-5`, `+1`, `**x`
# One pass over the markup a snippet shows or hides: code spans (one line), wikilinks and
# embeds are kept as written; markdown images go; `*` and `_` emphasis loses its markers
# only where paired around text (`max_retries`, `__init__.py`, `*args` stay); a `__` pair
# must hold a space (`__a phrase__`): `__init__` reads as a name.
_MARKUP_RE = re.compile(  # the lookahead first makes the scan ~5x faster
    r"(?=[`!\[*_])(?:(?P<code>(?P<ticks>`+)(?!`)[^\n]+?(?<!`)(?P=ticks)(?!`))"
    r"|(?P<wiki>!?\[\[[^\[\]\n]*\]\])"
    r"|(?P<img>!\[[^\]\n]*\]\([^)\n]*\))"
    r"|(?<![\w*\\])(?P<star>\*{1,3})(?![\s*])(?P<stext>[^\n]+?)(?<![\s*\\])(?P=star)(?![\w*])"
    r"|(?<![\w\\])_(?![\s_])(?P<u1text>[^_\n]+?)(?<![\s\\])_(?!\w)"
    r"|(?<![\w\\])(?P<under>__{1,2})(?![\s_])(?P<utext>[^_\n]*?\s[^_\n]*?)(?<![\s\\])(?P=under)(?!\w))"
)
_IMAGE_EXTS = frozenset({"avif", "bmp", "gif", "heic", "ico", "jpeg", "jpg", "png", "svg", "tif", "tiff", "webp"})
# A sentence break inside a kept span would cut it in two: its spaces after . ! ? wait
# as this private-use character until the body is split.
_HELD = "\ue000"
_HELD_RE = re.compile(r"(?<=[.!?])\s")
_CALLOUT_RE = re.compile(r"\[![^\]\s]*\][+-]?")

# word -> its index term, for the words that have one (the analyzer's `term_map`)
TermMap = Callable[[Iterable[str]], Mapping[str, str]]
SNIPPET_CHARS = 240


_SENTENCE_END_RE = re.compile(r"[.!?][)\]\"'”’»]*(?=\s|$)")
_CUT_TRAIL = " ,;:-–—(\t\n"
_WORD_END = ",;:.!?)]}…"  # what may follow a whole word


def shorten(text: str, limit: int, sentences: bool = False) -> str:
    """At most `limit` characters of `text`, cut at a word boundary and marked with an
    ellipsis. With `sentences`, a sentence end in the second half of the limit is
    preferred, and the text then ends there, unmarked. A single word longer than the
    limit (a URL) is the only thing cut inside a word."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ""
    if sentences:
        ends = [m.end() for m in _SENTENCE_END_RE.finditer(text, 0, limit + 1) if m.end() <= limit]
        if ends and ends[-1] > limit // 2:
            return text[: ends[-1]]
    cut = text[: limit - 1]
    if not (text[limit - 1].isspace() or text[limit - 1] in _WORD_END):  # inside a word
        space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
        if space > 0:
            cut = cut[:space]
    return cut.rstrip(_CUT_TRAIL) + "…"


def _markup(m: re.Match[str]) -> str:
    kind = m.lastgroup
    if kind == "stext" or kind == "utext" or kind == "u1text":
        return _MARKUP_RE.sub(_markup, m[kind])
    span = m[0]
    if kind == "img":  # an image goes; a markdown embed of a note stays
        href = span[span.index("](") + 2 : -1].split()
        return span if href and href[0].strip("<>").split("#", 1)[0].lower().endswith(".md") else ""
    if kind == "wiki" and span[0] == "!":
        name = span[3:-2].split("|", 1)[0].split("#", 1)[0].rstrip("\\ ").rpartition("/")[2]
        if "." in name and name.rpartition(".")[2].lower() in _IMAGE_EXTS:
            return ""
    return _HELD_RE.sub(_HELD, span) if "." in span or "!" in span or "?" in span else span


def _piece(line: str) -> str:
    """One sentence or line without its list, quote, heading or callout markers (a quote's
    `>` may touch its text; any other marker glued to a word is text: `#tag`, `-5`)."""
    text = line.lstrip(LEAD_CHARS)
    if not text:
        return ""
    cut = len(line) - len(text)
    if cut and line[cut - 1] in _GLUED:
        while cut and line[cut - 1] in _GLUED:
            cut -= 1
        text = line[cut:]
    elif text[0] == "[" and text.startswith("[!") and ">" in line[:cut]:
        text = _CALLOUT_RE.sub("", text, 1)
    elif text[0] in "`~" and text.startswith(("```", "~~~")):
        text = text.lstrip("`~")  # a code fence; its language stays
    if _HELD in text:
        text = text.replace(_HELD, " ")
    return " ".join(text.split())


def pieces_of(body: str) -> list[str]:
    """The body as reading text in sentences and lines: wikilinks, embeds, `#tags` and code
    spans as written; no emphasis, list, quote, heading or callout markers, no images."""
    body = _MARKUP_RE.sub(_markup, body)
    return [p for p in map(_piece, _SPLIT_RE.split(body)) if p]


def best_passage(body: str, terms: Sequence[str], term_map: TermMap | None, limit: int = SNIPPET_CHARS) -> str:
    """The stretch of the body that holds the most query terms, about `limit` characters.

    A piece scores 10 per distinct query term it holds (as the analyzer sees them), plus 1
    per 100 characters up to 2. One body; `Snippets` does many for one query."""
    return Snippets(terms, term_map)(body, limit)


class Snippets:
    """`best_passage` of one query over body after body (a search makes ten or more): the
    pieces' query terms are found from the words that begin as a query term's stem does
    (passages.Coverage finds them the same way, and the same words), remembering what each
    word means from one body to the next, instead of splitting every piece into words and
    analyzing them all; the same snippet, in about half the time."""

    def __init__(self, terms: Sequence[str], term_map: TermMap | None) -> None:
        from vaultmem.search.passages import Meanings, english_starts

        self.wanted = set(terms)
        self.term_map = term_map
        self._starts = english_starts(self.wanted) if self.wanted and term_map is not None else None
        self._meaning_of = Meanings(self.wanted, term_map) if term_map is not None else None

    def __call__(self, body: str, limit: int = SNIPPET_CHARS) -> str:
        pieces = pieces_of(body)
        if not pieces:
            return ""
        best_i = 0
        if self.wanted and self.term_map is not None:
            found = self._found(pieces)
            best_score = -1
            for i, piece in enumerate(pieces):
                score = len(found[i]) * 10 + min(len(piece), 200) // 100
                if score > best_score:
                    best_i, best_score = i, score
        text = pieces[best_i]
        j = best_i + 1
        while len(text) < limit and j < len(pieces):
            text += " " + pieces[j]
            j += 1
        if best_i > 0 and len(text) < limit // 2:
            text = pieces[best_i - 1] + " " + text
        return shorten(text, limit)

    def _found(self, pieces: list[str]) -> list[set[str]]:
        """The query terms each piece holds."""
        lows = [p.lower() for p in pieces]
        joined = "\n".join(lows)  # a line break: no word runs from one piece into the next
        if self._starts is None or NOSPACE_RE.search(joined):
            return self.found_by_words(lows)
        starts = list(accumulate((len(low) + 1 for low in lows[:-1]), initial=0))
        out: list[set[str]] = [set() for _ in pieces]
        meaning = self._meaning_of
        assert meaning is not None
        for at, word in self._starts.finditer(joined):
            term = meaning(word)
            if term is not None:
                out[bisect_right(starts, at) - 1].add(term)
        return out

    def found_by_words(self, lows: list[str]) -> list[set[str]]:
        """The query terms each (lower-cased) piece holds, from all of its words: any script."""
        assert self.term_map is not None
        tokens = [words(low) for low in lows]
        hits = {word: term for word, term in self.term_map(set().union(*tokens)).items() if term in self.wanted}
        return [{hits[w] for w in toks if w in hits} if hits else set() for toks in tokens]


def word_runs(text: str) -> list[str]:
    r"""The runs of word characters of `text` (the regex `\w+`)."""
    return text.translate(_NOT_WORD_ASCII).split() if text.isascii() else _WORD_RE.findall(text)


def shingles(text: str, size: int = 3) -> set[tuple[str, ...]]:
    tokens = word_runs(text.lower())
    if len(tokens) < size:
        return {tuple(tokens)} if tokens else set()
    # zip of shifted lists builds the n-grams in C: ~4x faster than slicing per position
    return set(zip(*(tokens[i:] for i in range(size)), strict=False))


def jaccard(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class NearDuplicates:
    """Streaming near-duplicate detection: `first_twin(key, body)` returns the key of an
    earlier body it repeats (identical after whitespace and case, or word-3-gram Jaccard
    at least `threshold`), else remembers it and returns None."""

    def __init__(self, threshold: float = 0.85) -> None:
        if not 0.0 <= threshold <= 1.0:  # identical bodies are twins by their Jaccard of 1
            raise ValueError("a Jaccard threshold is between 0 and 1")
        self.threshold = threshold
        self._kept: list[tuple[str, str, set[tuple[str, ...]]]] = []
        self._prepared: dict[str, tuple[str, set[tuple[str, ...]]]] = {}

    @staticmethod
    def signature(body: str) -> tuple[str, set[tuple[str, ...]]]:
        """(the body in lower case with its spacing collapsed, its word 3-grams). Two bodies
        with the same 3-grams, at least one, are twins whatever their text (Jaccard 1), so
        the text is kept only for a body without a word, the one case it decides."""
        low = body.lower()
        sig = shingles(low)
        return ("" if sig else " ".join(low.split())), sig

    def prepare(self, key: str, body: str) -> None:
        """Compute `body`'s signature ahead of its `first_twin` call (which must pass the
        same body), e.g. while waiting for something else."""
        self._prepared[key] = self.signature(body)

    def first_twin(self, key: str, body: str) -> str | None:
        prepared = self._prepared.pop(key) if key in self._prepared else None
        norm, sig = prepared if prepared is not None else self.signature(body)
        for other_key, other_norm, other_sig in self._kept:
            if not sig or not other_sig:  # a body without a word: twins only when identical
                if norm == other_norm and not sig and not other_sig:
                    return other_key
                continue
            # Jaccard >= t needs the smaller set to hold at least t of the larger: a cheap
            # test that skips almost every comparison of unrelated notes.
            small, large = sorted((len(sig), len(other_sig)))
            if small >= self.threshold * large and jaccard(sig, other_sig) >= self.threshold:
                return other_key
        self._kept.append((key, norm, sig))
        return None
