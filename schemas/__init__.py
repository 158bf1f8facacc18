"""Pydantic models of everything that crosses the service's edges (HTTP, Kafka, files)."""

from .deltas import MatchDelta
from .query import EdgeSpec, QuerySpec, VertexSpec
from .updates import EdgeUpdate, to_batch

__all__ = ["EdgeSpec", "EdgeUpdate", "MatchDelta", "QuerySpec", "VertexSpec", "to_batch"]
