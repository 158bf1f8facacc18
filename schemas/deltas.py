"""Wire shape of a match delta (websocket frames, the ``dcsm.matches`` topic, ``--emit``).

Example: ``{"query": "tri", "sign": 1, "seq": 1234, "match": [17, 42, 99]}`` where ``match``
lists data vertex ids in query-vertex order. The timing fields are optional.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class MatchDelta(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str
    sign: Literal[1, -1]
    seq: int = Field(ge=0, description="sequence number of the update that caused it")
    match: list[int]
    backfill: bool | None = Field(default=None, description="true for backfilled matches")
    arrival_ts: float | None = Field(
        default=None, allow_inf_nan=False, description="update arrival, epoch seconds"
    )
    emitted_ts: float | None = Field(
        default=None, allow_inf_nan=False, description="delta emission, epoch seconds"
    )
