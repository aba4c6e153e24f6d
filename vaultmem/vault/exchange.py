"""Two paths swapped in one step: Linux's renameat2 with RENAME_EXCHANGE (3.15+), which
store.replace_file uses so that a save it did not see is put back, never overwritten."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _renameat2() -> Any:
    """glibc's renameat2, for RENAME_EXCHANGE (Linux 3.15+); None where there is none."""
    global _RENAMEAT2
    if _RENAMEAT2 is False:
        try:
            import ctypes
            import ctypes.util

            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            fn = libc.renameat2
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            _RENAMEAT2 = fn
        except (OSError, AttributeError):
            _RENAMEAT2 = None
    return _RENAMEAT2


_RENAMEAT2: Any = False
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (RENAME_EXCHANGE); False where the system cannot."""
    fn = _renameat2()
    if fn is None:
        return False
    return fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0
