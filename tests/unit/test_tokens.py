"""Words and terms of every script (index/tokens.py, index/analysis.py). Pure: tables."""

from __future__ import annotations

import pytest

from vaultmem.index.analysis import analyze
from vaultmem.index.tokens import words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Archiving utility, e.g. tar 3.5", ["Archiving", "utility", "e.g", "tar", "3.5"]),
        ("归档实用程序", ["归档", "档实", "实用", "用程", "程序"]),  # pairs: no spaces between words
        ("猫", ["猫"]),  # a run of one character is itself
        ("tar归档", ["tar", "归档"]),  # a script change splits a word
        ("हिन्दी", ["हिन्दी"]),  # vowel signs and virama stay inside the word
        ("है।", ["है"]),  # the danda is punctuation
        ("أَرْشَفَة", ["أَرْشَفَة"]),  # Arabic diacritics too
        ("", []),
    ],
)
def test_words(text: str, expected: list[str]) -> None:
    assert words(text) == expected


@pytest.mark.parametrize(
    ("document", "query"),
    [
        ("Archiving utility.", "archive utilities"),  # English: Porter, as before
        ("Утилита для архивирования.", "Архивирование"),  # Russian: Snowball
        ("أداة لأرشفة الملفات", "الملفات"),
        ("संग्रह करने की उपयोगिता", "उपयोगिता"),
        ("アーカイブユーティリティです", "アーカイブユーティリティ"),  # pairs match inside longer text
        ("归档实用程序。", "实用程序"),
        ("압축 파일을 생성합니다", "파일"),  # Korean particles: 파일을 still holds 파일
        ("สร้างไฟล์บีบอัด", "ไฟล์"),
    ],
)
def test_a_query_finds_its_words_in_every_script(document: str, query: str) -> None:
    doc_terms = set(analyze(document))
    assert set(analyze(query)) <= doc_terms, (list(analyze(query)), sorted(doc_terms))


@pytest.mark.parametrize(
    "text",
    ["The running dogs are archived", "e.g. version 3.5 of the tar(1) utility", "Don't over-think it: x_y z"],
)
def test_english_is_analyzed_as_whoosh_does(text: str) -> None:
    from whoosh.analysis import StemmingAnalyzer

    assert list(analyze(text)) == [t.text for t in StemmingAnalyzer()(text)]
