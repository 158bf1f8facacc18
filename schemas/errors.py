"""Turning a pydantic ValidationError into one line that names every bad field.

Used wherever a schema error must be reported in one line (the CLI's stderr, a 4xx body's
``detail``, a dead-letter record's ``reason``). Field paths follow the style of
:class:`dcsm.errors.PatternError`: ``vertices[0].label``, ``edges[2].u``.
"""

from __future__ import annotations

from pydantic import ValidationError


def field_path(loc: tuple[int | str, ...]) -> str:
    """``("vertices", 0, "label")`` -> ``"vertices[0].label"``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def one_line(exc: ValidationError) -> str:
    """Every error of ``exc`` as ``field: message``, joined by ``"; "``.

    Errors raised by model validators (pattern checks) carry no location but name their
    field at the start of the message already, so they are passed through unchanged.
    """
    parts = []
    for err in exc.errors(include_url=False):
        where = field_path(tuple(err["loc"]))
        parts.append(f"{where}: {err['msg']}" if where else err["msg"])
    return " ".join("; ".join(parts).split())
