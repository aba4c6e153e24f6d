"""The lexical analyzer's words (analysis.py), stdlib only: snippets (search/text.py) and
passage coverage (search/passages.py) split text into the words the index sees without
importing Whoosh.

Every script is searchable (issue 14):
- a word is a run of letters, digits, `_` and the combining marks that scripts such as
  Devanagari, Thai and Arabic write inside words (`\\w` alone splits "हिन्दी" at each vowel
  sign), with inner dots kept ("e.g", "3.5");
- scripts written without spaces between words (Chinese, Japanese, Korean, Thai, Lao,
  Khmer, Myanmar) have no word boundaries to find, so a run of them becomes its
  overlapping character pairs (归档实用 -> 归档 档实 实用), the bigrams of Lucene's CJK
  analyzer: a phrase matches wherever its pairs occur, in any inflection of the text around
  it, and no dictionary is needed. A run of one character is that character.
"""

from __future__ import annotations

import re

# Combining marks written inside words, by block; punctuation of those blocks (the
# Devanagari danda U+0964-5, Thai U+0E2F and U+0E5A-B) stays out.
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
    "\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed"
    "\u0900-\u0963\u0966-\u097f\u0980-\u0dff\u0e00-\u0e2e\u0e30-\u0e59\u0e80-\u0eff"
    "\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff\u200c\u200d"
)
_W = rf"[\w{_MARKS}]"
# Words, with inner dots kept ("e.g", "3.5").
TOKEN_RE = re.compile(rf"{_W}+(?:\.{_W}+)*", re.UNICODE)
WORD_CHAR = re.compile(_W)  # one character of a word
WORD_CLASS = _W  # the same, as a pattern to build others with

# Scripts without spaces between words: Thai, Lao, Myanmar, Hangul Jamo, Khmer, kana,
# Han (with extension A and compatibility ideographs), Hangul syllables.
_NOSPACE = (
    "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff"
    "\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
)
NOSPACE_RE = re.compile(rf"[{_NOSPACE}]+")


def is_nospace(word: str) -> bool:
    """Whether `word` (one token of `words`) is a piece of a script without spaces."""
    return NOSPACE_RE.fullmatch(word) is not None


def words(text: str) -> list[str]:
    """The words of `text` as the index sees them, in order (see the module docstring)."""
    found = TOKEN_RE.findall(text)
    if not NOSPACE_RE.search(text):
        return found  # the common case: nothing to pair
    out: list[str] = []
    for word in found:
        at = 0
        for run in NOSPACE_RE.finditer(word):
            if run.start() > at:
                out.append(word[at : run.start()])
            piece = run.group(0)
            out.extend([piece] if len(piece) == 1 else [piece[i : i + 2] for i in range(len(piece) - 1)])
            at = run.end()
        if at < len(word):
            out.append(word[at:])
    return [w.strip(".") or w for w in out] if out else out


__all__ = ["NOSPACE_RE", "TOKEN_RE", "WORD_CHAR", "WORD_CLASS", "is_nospace", "words"]
