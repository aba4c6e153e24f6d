"""The lexical analyzer's word pattern (analysis.py), stdlib only: snippets (search/text.py)
split text into the words the index sees without importing Whoosh."""

from __future__ import annotations

import re

# Words, with inner dots kept ("e.g", "3.5"): Whoosh's default tokenizer pattern.
TOKEN_RE = re.compile(r"\w+(?:\.?\w+)*", re.UNICODE)
