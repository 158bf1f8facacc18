"""Pydantic models of everything that crosses the service's edges (HTTP, Kafka, files)."""

from .deltas import MatchDelta
from .errors import field_path, one_line
from .query import EdgeSpec, QuerySpec, VertexSpec
from .updates import EdgeUpdate, to_batch

__all__ = [
    "EdgeSpec",
    "EdgeUpdate",
    "MatchDelta",
    "QuerySpec",
    "VertexSpec",
    "field_path",
    "one_line",
    "to_batch",
]
