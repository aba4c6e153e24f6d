"""Log records meant for the person at the terminal: the embedding model's one-time
preparation (index/onnx_export.py marks those records `notice`) and its warnings go to
stderr as notices; the rest of what the model code logs stays quiet."""

from __future__ import annotations

import logging

from vaultmem.cli.output import notice

MODEL_LOGGER = "vaultmem.embedder"


class NoticeHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "notice", False) or record.levelno >= logging.WARNING:
            notice(f"vaultmem: {record.getMessage()}")


def show_model_notices() -> None:
    """Install the handler once per process."""
    logger = logging.getLogger(MODEL_LOGGER)
    if any(isinstance(h, NoticeHandler) for h in logger.handlers):
        return
    logger.addHandler(NoticeHandler())
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
