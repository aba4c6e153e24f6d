"""Frozen dataclasses shared across layers; `to_dict()` is the JSON contract of SPEC §6."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with a file. Never carries note contents: operators see paths only."""

    path: str
    severity: str  # "error" | "warning"
    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "severity": self.severity, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class NoteSummary:
    id: str
    title: str
    type: str
    scope: str
    path: str
    owner: str | None = None
    project: str | None = None
    score: float | None = None
    snippet: str | None = None
    trust_score: float | None = None
    created: str | None = None
    updated: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "type": self.type,
            "scope": self.scope,
            "path": self.path,
            "owner": self.owner,
            "project": self.project,
            "score": self.score,
            "snippet": self.snippet,
            "trust_score": self.trust_score,
            "created": self.created,
            "updated": self.updated,
        }


@dataclass(frozen=True, slots=True)
class WriteResult:
    id: str
    path: str
    version: int
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "version": self.version, **self.extra}
