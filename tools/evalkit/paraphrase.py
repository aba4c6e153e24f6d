"""The paraphrase subset of an evaluation set (issue 24): the questions that share the fewest
content words with their answer.

A question's overlap is the share of its content words (lower-cased, Snowball English stems,
Snowball's English stop words and one-letter words left out) found among its answer's words;
with several answers, the best of them (a question is literal when any answer repeats its
words). The subset is, in each split, the third of the questions with the least overlap
(ties by id). Fixed before any tuning; it depends on the texts alone, never on a result.
A method that wins only where the question repeats the note's words loses here.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence

SHARE = 1 / 3
NAME = "paraphrase"

# Snowball's English stop word list (snowballstem.org/algorithms/english/stop.txt).
_STOP_LIST = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing would should could ought i'm you're he's she's it's we're they're i've you've we've
    they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't
    aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't shan't
    shouldn't can't cannot couldn't mustn't let's that's who's what's here's there's when's
    where's why's how's a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very
    """
STOP_WORDS = frozenset(_STOP_LIST.split())
_WORD = re.compile(r"[\w']+", re.UNICODE)


@functools.cache
def _stemmer() -> object:
    import Stemmer

    return Stemmer.Stemmer("english")


def content_words(text: str) -> set[str]:
    words = [w.strip("'") for w in _WORD.findall(text.lower())]
    kept = [w for w in words if len(w) > 1 and w not in STOP_WORDS]
    stem = _stemmer().stemWords  # type: ignore[attr-defined]
    return set(stem(kept))


def overlap(question: str, answers: Iterable[str]) -> float:
    """The best share of the question's content words that one answer holds (0 when the
    question has none)."""
    asked = content_words(question)
    if not asked:
        return 0.0
    return max((len(asked & content_words(text)) / len(asked) for text in answers), default=0.0)


def least_overlap(
    query_ids: Sequence[str],
    overlaps: Mapping[str, float],
    splits: Mapping[str, str],
    share: float = SHARE,
) -> set[str]:
    """In each split, the `share` of its questions with the least overlap (ties by id)."""
    chosen: set[str] = set()
    for split in sorted(set(splits.get(q, "") for q in query_ids)):
        inside = sorted((q for q in query_ids if splits.get(q, "") == split), key=lambda q: (overlaps[q], q))
        chosen.update(inside[: math.ceil(share * len(inside))])
    return chosen


def paraphrase_subset(
    query_ids: Sequence[str],
    queries: Sequence[str],
    qrels: Mapping[str, Mapping[str, float]],
    texts: Mapping[str, str],
    splits: Mapping[str, str],
) -> set[str]:
    """The paraphrase subset of a set: `texts` maps each document id to its text."""
    overlaps = {
        qid: overlap(query, [texts[d] for d, gain in qrels.get(qid, {}).items() if gain >= 1 and d in texts])
        for qid, query in zip(query_ids, queries, strict=True)
    }
    return least_overlap(query_ids, overlaps, splits)
