"""Service errors: subclasses of :class:`dcsm.errors.DcsmError`, the project's one hierarchy.

Each carries what the edges need to report it: an HTTP status and a stable ``code`` for the
API's error body, or a short ``reason`` for a dead-letter record. Per-record failures never
escape a loop: ingest turns them into dead letters, the API into 4xx bodies.
"""

from __future__ import annotations

from dcsm.errors import DcsmError


class ServiceError(DcsmError):
    """Base of the service's user-facing errors; ``status`` and ``code`` feed the API body."""

    status = 400
    code = "invalid_argument"

    def __init__(self, message: str, details: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or []


class QueryExists(ServiceError):
    status = 409
    code = "already_exists"


class QueryNotFound(ServiceError):
    status = 404
    code = "not_found"


class BatchTooLarge(ServiceError):
    status = 413
    code = "payload_too_large"


class NotReady(ServiceError):
    status = 503
    code = "unavailable"


class Unauthenticated(ServiceError):
    """No bearer token, or one the service does not know (service/auth.py)."""

    status = 401
    code = "unauthenticated"
    headers = {"WWW-Authenticate": "Bearer"}


class PermissionDenied(ServiceError):
    """A known token whose role does not allow the call."""

    status = 403
    code = "permission_denied"


class RecordError(DcsmError):
    """One input record (or one element of it) that cannot become an update.

    ``reason`` is a short machine-readable tag (``malformed``, ``invalid``, ``oversize``,
    ``self_loop``, ``label_conflict``), ``message`` the human explanation, ``index`` the
    element of a batch message it concerns (None: the whole record).
    """

    def __init__(self, reason: str, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.index = index


class ConfigError(DcsmError):
    """Startup misconfiguration; the CLI prints it as one line and exits non-zero."""
