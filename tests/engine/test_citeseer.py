"""Static embeddings and distinct subgraphs on Citeseer against the published counts.

``expected_counts.tsv`` lists, per pattern, the unique (edge-induced) subgraphs, |Aut| and
the embeddings (= unique x |Aut|) that G2Miner and the CSM-study graphflow report.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest
from refdata import shared_data_dir

from dcsm.engine import make_engine
from dcsm.graphio import read_csm_query, read_graph

pytestmark = pytest.mark.shared


def _rows(root: Path) -> dict[str, dict[str, str]]:
    """Rows of the tsv that have an embeddings count (some rows are vertex-induced only)."""
    with open(root / "citeseer" / "expected_counts.tsv", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    header, body = rows[0], rows[1:]
    out = {}
    for row in body:
        rec = dict(zip(header, row, strict=False))
        name = rec[header[0]]
        if (root / "citeseer" / "queries" / name).is_file():
            out[name] = {
                "unique": rec[header[1]],
                "automorphisms": rec[header[2]],
                "embeddings": rec[header[3]],
            }
    return out


def _patterns() -> list[str]:
    root = shared_data_dir()
    if root is None:
        return ["triangle", "cycle4", "diamond", "clique4", "house", "pentagon"]
    return sorted(_rows(root))


@pytest.fixture(scope="module")
def citeseer(shared_data: Path):  # type: ignore[no-untyped-def]
    engine = make_engine("cpu")
    engine.load_graph(read_graph(shared_data / "citeseer" / "citeseer_unlabeled.graph"))
    yield engine
    engine.close()


@pytest.mark.parametrize("name", _patterns())
def test_embeddings_and_distinct_subgraphs(shared_data: Path, citeseer, name: str) -> None:  # type: ignore[no-untyped-def]
    row = _rows(shared_data)[name]
    embeddings, unique, aut = (int(row[k]) for k in ("embeddings", "unique", "automorphisms"))
    assert embeddings == unique * aut  # the tsv's own identity
    pattern = read_csm_query(shared_data / "citeseer" / "queries" / name)
    assert citeseer.count_static(pattern) == embeddings
    distinct = dataclasses.replace(pattern, distinct=True)
    assert citeseer.count_static(distinct) == embeddings // aut == unique
