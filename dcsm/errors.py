"""One exception hierarchy for the whole project.

Every error a user can cause derives from :class:`DcsmError`; the CLI turns any of them into
one line on stderr and exit status 2, the HTTP API into a 4xx body, the Kafka ingest into a
dead-letter record. Anything else escaping is a bug.
"""

from __future__ import annotations


class DcsmError(Exception):
    """Base class of every user-facing error."""


class InputFileError(DcsmError):
    """A graph, query or stream file that cannot be read; names the file and line."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")


class PatternError(DcsmError):
    """A query pattern that is not a valid CSM query (names the field and the reason)."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class UpdateError(DcsmError):
    """An edge update that cannot be applied (self loop, label conflict, bad id)."""


class EngineError(DcsmError):
    """Misuse of an engine: unknown query id, registration in the past, closed engine."""


class EngineStopped(EngineError):
    """The engine can apply nothing more (a GPU kernel stopped on a full pool, say): the
    service stops without a checkpoint and a restart replays what came after the last one."""


class BackendUnavailable(DcsmError):
    """The requested backend cannot run here (no CuPy, no CUDA device)."""
