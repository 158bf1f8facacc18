"""Wire shape of a query pattern (HTTP bodies, query files in JSON).

Example::

    {"name": "tri", "vertices": [{"id": 0, "label": 1}, {"id": 1}, {"id": 2}],
     "edges": [{"u": 0, "v": 1}, {"u": 1, "v": 2, "label": 3}, {"u": 0, "v": 2}],
     "distinct": false}

A missing or null label matches any label. Vertex ids are 0..n-1, each declared once; a match
lists data vertices in that order.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from dcsm.errors import PatternError
from dcsm.model import MAX_LABEL, MAX_PATTERN_VERTICES, Pattern

NAME_PATTERN = r"^[A-Za-z0-9_.~-]{1,128}$"

Label = Field(default=None, ge=0, le=MAX_LABEL)


class VertexSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int = Field(ge=0, description="query vertex id, 0..n-1")
    label: int | None = Label


class EdgeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    u: int = Field(ge=0)
    v: int = Field(ge=0)
    label: int | None = Label


class QuerySpec(BaseModel):
    """A query pattern as users send it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN, description="[A-Za-z0-9_.~-]{1,128}")
    vertices: list[VertexSpec] = Field(min_length=2, max_length=MAX_PATTERN_VERTICES)
    edges: list[EdgeSpec] = Field(min_length=1)
    distinct: bool = Field(
        default=False, description="report each matching subgraph once, not every embedding"
    )

    @model_validator(mode="after")
    def _valid_pattern(self) -> QuerySpec:
        ids = sorted(v.id for v in self.vertices)
        if ids != list(range(len(ids))):
            raise PydanticCustomError(
                "pattern", "vertices: ids must be 0..{last}, each declared once; got {ids}",
                {"last": len(ids) - 1, "ids": ids},
            )  # fmt: skip
        try:
            self.to_pattern()
        except PatternError as exc:
            raise PydanticCustomError("pattern", "{field}: {reason}", vars(exc)) from None
        return self

    def to_pattern(self) -> Pattern:
        """The validated core pattern (raises PatternError)."""
        labels = {v.id: v.label for v in self.vertices}
        pattern = Pattern.build(
            self.name,
            [labels[i] for i in range(len(labels))],
            [(e.u, e.v, e.label) for e in self.edges],
            self.distinct,
        )
        from dcsm.engine.plan import plan_query  # distinct needs a checkable symmetry

        if self.distinct:
            plan_query(pattern)
        return pattern

    @staticmethod
    def from_pattern(pattern: Pattern) -> QuerySpec:
        def lab(x: int) -> int | None:
            return None if x < 0 else x

        return QuerySpec(
            name=pattern.name,
            vertices=[
                VertexSpec(id=i, label=lab(x)) for i, x in enumerate(pattern.vlabels.tolist())
            ],
            edges=[
                EdgeSpec(u=u, v=v, label=lab(x))
                for (u, v), x in zip(pattern.edges.tolist(), pattern.elabels.tolist(), strict=True)
            ],
            distinct=pattern.distinct,
        )
