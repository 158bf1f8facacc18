"""Wire shape of an edge update (Kafka records, ``POST /api/v1/updates``).

Example::

    {"op": "insert", "u": 17, "v": 42, "label": 0, "u_label": 3, "v_label": 1,
     "ts": 1732280000.123}

``label`` (default 0), the vertex labels and ``ts`` are optional. A vertex's label is fixed
when it is first seen; a later conflicting label rejects that update only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from dcsm.model import ANY_LABEL, MAX_LABEL, MAX_VERTEX_ID, OP_DELETE, OP_INSERT, UpdateBatch


class EdgeUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: Literal["insert", "delete"]
    # strict: JSON true, "17" or 17.0 is a wrong type for an id or label, not a coercion.
    u: int = Field(ge=0, le=MAX_VERTEX_ID, strict=True)
    v: int = Field(ge=0, le=MAX_VERTEX_ID, strict=True)
    label: int = Field(default=0, ge=0, le=MAX_LABEL, strict=True)
    u_label: int | None = Field(default=None, ge=0, le=MAX_LABEL, strict=True)
    v_label: int | None = Field(default=None, ge=0, le=MAX_LABEL, strict=True)
    ts: float | None = Field(
        default=None, allow_inf_nan=False, strict=True,
        description="producer timestamp, seconds since epoch",
    )  # fmt: skip

    @model_validator(mode="after")
    def _no_self_loop(self) -> EdgeUpdate:
        if self.u == self.v:
            raise PydanticCustomError("self_loop", "u, v: self loop on vertex {u}", {"u": self.u})
        return self


def to_batch(updates: Sequence[EdgeUpdate], first_seq: int, arrival: np.ndarray) -> UpdateBatch:
    """Updates in arrival order as an engine batch with seqs first_seq.. and the given
    arrival times (float64 seconds, shape (n,))."""

    def lab(x: int | None) -> int:
        return ANY_LABEL if x is None else x

    return UpdateBatch.from_arrays(
        np.array([OP_INSERT if x.op == "insert" else OP_DELETE for x in updates], np.int8),
        np.array([x.u for x in updates], np.int64),
        np.array([x.v for x in updates], np.int64),
        np.array([x.label for x in updates], np.int32),
        first_seq=first_seq,
        ts=arrival,
        u_label=np.array([lab(x.u_label) for x in updates], np.int32),
        v_label=np.array([lab(x.v_label) for x in updates], np.int32),
    )
