"""The ``dcsm`` command line, end to end, against networkx on small generated workloads.

The expected numbers come from ``nx_reference`` over files parsed here with plain Python,
so neither the engine nor the readers grade their own output.
"""

from __future__ import annotations

import importlib.machinery
import json
import socket
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from nx_reference import embeddings, replay

from dcsm.cli import main
from dcsm.engine.factory import gpu_available
from dcsm.model import Graph, Pattern, UpdateBatch
from dcsm.schemas import MatchDelta

TRIANGLE = "v 0 0\nv 1 0\nv 2 0\ne 0 1 0\ne 1 2 0\ne 2 0 0\n"
CYCLE4 = "v 0 0\nv 1 0\nv 2 0\nv 3 0\ne 0 1 0\ne 1 2 0\ne 2 3 0\ne 3 0 0\n"
LABELLED_PATH = "v 0 1\nv 1 0\nv 2 1\ne 0 1 0\ne 1 2 0\n"
WILD_TAILED = {  # a JSON query with wildcards: a triangle with a tail, tail end labelled 1
    "name": "ignored-the-file-stem-names-it",
    "vertices": [{"id": 0}, {"id": 1}, {"id": 2}, {"id": 3, "label": 1}],
    "edges": [{"u": 0, "v": 1}, {"u": 1, "v": 2}, {"u": 2, "v": 0}, {"u": 2, "v": 3}],
}


# -- plain parsing of the files the CLI reads (independent of dcsm.graphio) ----------------


def parse_graph(path: Path) -> Graph:
    ids, labels, edges = [], [], []
    for line in path.read_text().splitlines():
        t = line.split()
        if t and t[0] == "v":
            ids.append(int(t[1]))
            labels.append(int(t[2]))
        elif t and t[0] == "e":
            edges.append((int(t[1]), int(t[2]), int(t[3])))
    e = np.array(edges, np.int64).reshape(-1, 3)
    return Graph(
        np.array(ids, np.int64),
        np.array(labels, np.int32),
        e[:, 0],
        e[:, 1],
        e[:, 2].astype(np.int32),
    )


def parse_stream(path: Path) -> UpdateBatch:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return UpdateBatch.from_arrays(
        np.array([1 if t[0] == "e" else -1 for t in rows]),
        np.array([int(t[1]) for t in rows]),
        np.array([int(t[2]) for t in rows]),
        np.array([int(t[3]) for t in rows]),
    )


def parse_query(text: str) -> Pattern:
    vl, edges = [], []
    for line in text.splitlines():
        t = line.split()
        if t[0] == "v":
            vl.append(int(t[2]))
        else:
            edges.append((int(t[1]), int(t[2]), int(t[3])))
    return Pattern.build("q", vl, edges)


WILD_TAILED_PATTERN = Pattern.build(
    "q", [None, None, None, 1], [(0, 1, None), (1, 2, None), (2, 0, None), (2, 3, None)]
)


# -- fixtures ------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 70-vertex power-law graph with labels 0/1, split by the DCSM protocol, plus query
    files; generated through the CLI itself."""
    d = tmp_path_factory.mktemp("cli")
    assert (
        main(
            [
                "gen-graph",
                "--vertices",
                "70",
                "--edges-per-vertex",
                "3",
                "--labels",
                "2",
                "--seed",
                "5",
                "--out",
                str(d / "full.graph"),
            ]
        )
        == 0
    )
    assert (
        main(["gen-stream", "--graph", str(d / "full.graph"), "--out", str(d / "w"), "--seed", "9"])
        == 0
    )
    files = {"graph": d / "w" / "initial.graph", "stream": d / "w" / "stream.updates"}
    for name, text in (("triangle", TRIANGLE), ("cycle4", CYCLE4), ("lpath", LABELLED_PATH)):
        files[name] = d / f"{name}.q"
        files[name].write_text(text)
    files["tailed"] = d / "tailed.json"
    files["tailed"].write_text(json.dumps(WILD_TAILED))
    return files


@pytest.fixture(scope="module")
def expected(workload: dict[str, Path]) -> dict[str, Counter]:
    graph, stream = parse_graph(workload["graph"]), parse_stream(workload["stream"])
    names = ["triangle", "cycle4", "lpath", "tailed"]
    patterns = [parse_query(workload[n].read_text()) for n in names[:3]] + [WILD_TAILED_PATTERN]
    _, deltas = replay(graph, stream, patterns)
    return dict(zip(names, deltas, strict=True))


def replay_args(workload: dict[str, Path], *extra: str) -> list[str]:
    return [
        "replay",
        "--graph",
        workload["graph"],
        "--updates",
        workload["stream"],
        "--query",
        workload["triangle"],
        "--query",
        workload["cycle4"],
        "--query",
        workload["lpath"],
        "--query",
        workload["tailed"],
        "--backend",
        "cpu",
        *extra,
    ]


# -- replay --------------------------------------------------------------------------------


def test_replay_json(capsys, workload, expected) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, *replay_args(workload, "--json"))
    assert (code, err) == (0, "")
    report = json.loads(out)  # stdout is exactly one JSON object
    assert list(report) == ["backend", "updates", "seconds", "queries"]
    assert report["backend"] == "cpu"
    assert report["updates"] == len(workload["stream"].read_text().splitlines())
    assert isinstance(report["seconds"], float) and 0 <= report["seconds"] < 60
    got = {q["name"]: (q["positive"], q["negative"]) for q in report["queries"]}
    want = {
        name: (
            sum(n for (_, s, _), n in d.items() if s > 0),
            sum(n for (_, s, _), n in d.items() if s < 0),
        )
        for name, d in expected.items()
    }
    assert got == want
    assert all(p > 0 for p, _ in want.values()) and any(n > 0 for _, n in want.values())


@pytest.mark.parametrize("batch", ["4096", "7"])
def test_replay_emit(capsys, tmp_path, workload, expected, batch) -> None:  # type: ignore[no-untyped-def]
    emit = tmp_path / "deltas.jsonl"
    code, out, _ = run(
        capsys, *replay_args(workload, "--emit", emit, "--json", "--batch-size", batch)
    )
    assert code == 0
    lines = emit.read_text().splitlines()
    got: dict[str, Counter] = {name: Counter() for name in expected}
    for line in lines:
        d = json.loads(line)
        assert list(d) == ["query", "sign", "seq", "match"]
        MatchDelta.model_validate(d)
        got[d["query"]][(d["seq"], d["sign"], tuple(d["match"]))] += 1
    assert got == expected
    # The JSON summary counts the same deltas.
    report = json.loads(out)
    assert sum(q["positive"] + q["negative"] for q in report["queries"]) == len(lines)


def test_replay_table(capsys, workload, expected) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, *replay_args(workload))
    assert code == 0
    for name, d in expected.items():
        pos = sum(n for (_, s, _), n in d.items() if s > 0)
        row = next(line for line in out.splitlines() if f" {name} " in line)
        assert f"{pos:,}" in row
    assert "updates on cpu" in out


def test_replay_distinct(capsys, workload, expected) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(
        capsys,
        "replay",
        "--graph",
        workload["graph"],
        "--updates",
        workload["stream"],
        "--query",
        workload["triangle"],
        "--distinct",
        "--json",
    )
    assert code == 0
    (q,) = json.loads(out)["queries"]
    # A triangle has 6 automorphisms; the data graph is unlabelled for this query.
    want = sum(n for (_, s, _), n in expected["triangle"].items() if s > 0)
    assert q["positive"] * 6 == want


# -- match ---------------------------------------------------------------------------------


def test_match_json(capsys, workload) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(
        capsys,
        "match",
        "--graph",
        workload["graph"],
        "--query",
        workload["triangle"],
        "--query",
        workload["tailed"],
        "--json",
    )
    assert code == 0
    from nx_reference import nx_graph

    g = nx_graph(parse_graph(workload["graph"]))
    want = [len(embeddings(g, parse_query(TRIANGLE))), len(embeddings(g, WILD_TAILED_PATTERN))]
    assert json.loads(out) == {
        "queries": [
            {"name": "triangle", "matches": want[0]},
            {"name": "tailed", "matches": want[1]},
        ]
    }
    assert want[0] > 0


def test_gpu_settings_reach_the_engine(capsys, workload, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The --gpu-* flags become GpuEngine keyword arguments (the service's gpu_* settings);
    an unknown value is a usage error naming the flag."""
    import dcsm.engine as engine_pkg

    seen = []
    make = engine_pkg.make_engine

    def cpu_engine(backend: str, gpu_options=None):  # type: ignore[no-untyped-def]
        seen.append(gpu_options)
        return make("cpu")

    monkeypatch.setattr(engine_pkg, "make_engine", cpu_engine)
    args = ["--graph", workload["graph"], "--query", workload["triangle"], "--json"]
    code, out, _ = run(capsys, "match", *args, "--gpu-pool-slabs", "4096", "--gpu-small-path", "2",
                       "--gpu-tail-div", "0", "--gpu-hub-bitmaps", "0")  # fmt: skip
    assert code == 0 and json.loads(out)["queries"][0]["matches"] > 0
    assert seen == [{"pool_slabs": 4096, "max_versions": 0, "max_vertices": 1 << 22,
                     "batch_size": 64, "batch_timeout_us": 0.0, "batch_cap": 16384,
                     "small_path": 2, "maxu": 1 << 16, "tail_div": 0,
                     "pool_compact": 0, "hub_bitmaps": 0, "host_threads": -1}]  # fmt: skip
    code, _, err = run(capsys, "match", *args, "--gpu-small-path", "3")
    assert code == 2 and "--gpu-small-path" in err
    code, _, err = run(capsys, "match", *args, "--gpu-maxu", "3000")
    assert code == 2 and "--gpu-maxu" in err and "power of two" in err
    code, _, err = run(capsys, "match", *args, "--gpu-tail-div", "-1")
    assert code == 2 and "--gpu-tail-div" in err and ">= 0" in err
    code, _, err = run(capsys, "match", *args, "--gpu-hub-bitmaps", "-2")
    assert code == 2 and "--gpu-hub-bitmaps" in err and ">= -1" in err


@pytest.mark.parametrize("capacity", ["pool_slabs", "max_versions", "max_vertices"])
def test_capacity_errors_name_settings_that_exist(capsys, capacity) -> None:  # type: ignore[no-untyped-def]
    """The GPU engine's error for an outgrown capacity names a flag of dcsm replay and match
    and a service setting: both must exist, or the advice would send the user nowhere."""
    from dataclasses import fields

    from dcsm.gpu.engine import too_small
    from service.settings import Settings

    msg = too_small("slabs", 10, capacity, 5)
    assert msg.startswith(f"the graph needs 10 slabs; {capacity}=5")
    flag, setting = f"--gpu-{capacity.replace('_', '-')}", f"gpu_{capacity}"
    assert flag in msg and setting in msg
    assert setting in {f.name for f in fields(Settings)}
    for command in ("serve", "replay", "match"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert flag in capsys.readouterr().out, command


def test_serve_has_a_flag_for_every_gpu_setting(capsys) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import fields

    from service.settings import Settings

    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = capsys.readouterr().out
    gpu = [f.name for f in fields(Settings) if f.name.startswith("gpu_")]
    assert len(gpu) >= 7
    assert [n for n in gpu if "--" + n.replace("_", "-") not in text] == []


def test_match_snap_graph_table(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "k4.txt").write_text("0 1\n0 2\n0 3\n1 2\n1 3\n2 3\n")
    (tmp_path / "tri").write_text(TRIANGLE)
    code, out, _ = run(capsys, "match", "--graph", tmp_path / "k4.txt", "--query", tmp_path / "tri")
    assert code == 0 and "24" in out  # 4 triangles x 6 embeddings


# -- errors --------------------------------------------------------------------------------


def error_cases(tmp: Path, w: dict[str, Path]) -> list[tuple[list, str]]:
    """(argv, a piece of the one line that must say what is wrong)."""
    (tmp / "bad.graph").write_text("v 0 0\nv 1 0\ne 0 9 0\n")
    (tmp / "disc.q").write_text("v 0 0\nv 1 0\nv 2 0\nv 3 0\ne 0 1 0\ne 2 3 0\n")
    (tmp / "asym.json").write_text(
        json.dumps(
            {
                "name": "a",
                "vertices": [{"id": 0, "label": 1}, {"id": 1}],
                "edges": [{"u": 0, "v": 1}],
            }
        )
    )
    (tmp / "broken.json").write_text('{"name": "x", "vertices": [')
    g, s, q = w["graph"], w["stream"], w["triangle"]
    base = ["replay", "--graph", g, "--updates", s, "--query", q]
    twin = tmp / "twin" / Path(q).name  # another query file of the same name
    twin.parent.mkdir()
    twin.write_text(Path(q).read_text())
    return [
        ([*base, "--query", twin], f"are both named {Path(q).stem!r}"),
        (["match", "--graph", g, "--query", q, "--query", twin], "are both named"),
        ([], "the following arguments are required: COMMAND"),
        (["bogus"], "invalid choice: 'bogus'"),
        (["replay"], "the following arguments are required: --graph, --updates, --query"),
        (
            ["replay", "--graph", tmp / "missing.graph", "--updates", s, "--query", q],
            "missing.graph: No such file or directory",
        ),
        (
            ["replay", "--graph", tmp / "bad.graph", "--updates", s, "--query", q],
            "bad.graph:3: edge uses undeclared vertex 9",
        ),
        (
            [*base[:-1], tmp / "disc.q"],
            "disc.q: invalid pattern: edges: the pattern is disconnected",
        ),
        ([*base[:-1], tmp / "broken.json"], "broken.json: Invalid JSON"),
        ([*base[:-1], tmp / "asym.json", "--distinct"], "asym.json: distinct: a symmetry"),
        ([*base, "--backend", "tpu"], "argument --backend: invalid choice: 'tpu'"),
        (
            [*base, "--count-only", "--emit", tmp / "x"],
            "--count-only and --emit exclude each other",
        ),
        ([*base, "--emit", tmp / "no" / "such" / "dir.jsonl"], "No such file or directory"),
        ([*base, "--batch-size", "0"], "argument --batch-size: must be >= 1, got 0"),
        ([*base, "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["match", "--graph", g], "the following arguments are required: --query"),
        (
            ["gen-graph", "--vertices", "abc", "--out", tmp / "g"],
            "argument --vertices: not a whole number",
        ),
        (
            ["gen-graph", "--vertices", "3", "--edges-per-vertex", "5", "--out", tmp / "g"],
            "need more vertices (3) than edges per vertex (5)",
        ),
        (
            [
                "gen-stream",
                "--graph",
                g,
                "--out",
                tmp / "o",
                "--insert-fraction",
                "0.9",
                "--delete-fraction",
                "0.2",
            ],
            "cannot insert",
        ),
        (
            ["gen-stream", "--graph", g, "--out", tmp / "o", "--rate", "-5"],
            "argument --rate: must be a finite number > 0",
        ),
        (
            ["gen-stream", "--graph", tmp / "missing", "--out", tmp / "o"],
            "No such file or directory",
        ),
    ]


def test_errors_exit_2_with_one_line(capsys, tmp_path, workload) -> None:  # type: ignore[no-untyped-def]
    for argv, piece in error_cases(tmp_path, workload):
        code, out, err = run(capsys, *argv)
        assert code == 2, argv
        assert err.endswith("\n") and err.count("\n") == 1, (argv, err)
        assert piece in err, (argv, err)
        assert "Traceback" not in err and out == "", argv
        assert err.startswith("dcsm"), err


@pytest.mark.skipif(gpu_available(), reason="a GPU is present here")
def test_gpu_backend_unavailable(capsys, workload) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(
        capsys,
        "match",
        "--graph",
        workload["graph"],
        "--query",
        workload["triangle"],
        "--backend",
        "gpu",
    )
    assert code == 2 and err.count("\n") == 1
    assert "backend gpu needs CuPy" in err


def test_errors_in_a_real_process(tmp_path: Path) -> None:
    """Through the interpreter, as a user runs it: status 2, one line, no traceback."""
    out = str(tmp_path / "g.graph")
    bad_npz = tmp_path / "cut.npz"
    bad_npz.write_bytes(b"PK\x03\x04 a zip's first bytes, then nothing of one")
    for argv in (
        ["replay", "--graph", str(tmp_path / "nope")],
        ["match", "--graph", str(tmp_path / "nope"), "--query", str(tmp_path / "q")],
        ["gen-graph", "--model", "chung-lu", "--edges", "100", "--gamma", "0", "--out", out],
        [
            "gen-graph",
            "--model",
            "chung-lu",
            "--edges",
            "100",
            "--triangle-prob",
            "0.2",
            "--out",
            out,
        ],  # holme-kim's option, silently ignored before
        ["gen-graph", "--vertices", "10", "--labels", "3000000000", "--out", out],
        ["gen-graph", "--vertices", "10", "--seed", "-1", "--out", out],
        ["gen-stream", "--graph", out, "--out", ""],  # wrote into the current folder
        ["match", "--graph", str(bad_npz), "--query", str(tmp_path / "q")],
        ["demo", "--vertices", "1", "--plain", "--backend", "cpu"],  # before any broker starts
        ["demo", "--labels", "0", "--plain", "--backend", "cpu"],
        ["loadgen", "--rates", "1000,0"],
        ["loadgen", "--linger-ms", "-1"],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "dcsm.cli", *argv], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 2
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dcsm.cli",
            "match",
            "--graph",
            str(tmp_path / "nope"),
            "--query",
            "x",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.stderr == f"dcsm: error: {tmp_path / 'nope'}: No such file or directory\n"


def test_serve_refuses_a_port_in_use(tmp_path: Path) -> None:
    """A port another process listens on: one line naming it, status 2, before the engine
    starts (uvicorn found it only after the engine's warm-up, and exited 3)."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "dcsm.cli", "serve", "--port", str(port),
             "--state-dir", str(tmp_path / "s")],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot listen on 127.0.0.1:{port}" in lines[0], proc.stderr
    assert "in use" in lines[0] and "--port" in lines[0]
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").iterdir())


def test_console_script_and_help(capsys) -> None:  # type: ignore[no-untyped-def]
    script = Path(sys.executable).parent / "dcsm"
    if script.exists():
        proc = subprocess.run([str(script), "--version"], capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout.startswith("dcsm ")
    with pytest.raises(SystemExit) as info:
        main(["replay", "--help"])
    assert info.value.code == 0
    assert "--emit FILE" in capsys.readouterr().out


# -- the service hook ----------------------------------------------------------------------


def _fake_service(monkeypatch: pytest.MonkeyPatch, add_commands) -> None:  # type: ignore[no-untyped-def]
    module = types.ModuleType("dcsm.service.cli")
    module.__spec__ = importlib.machinery.ModuleSpec("dcsm.service.cli", None)
    module.add_commands = add_commands
    monkeypatch.setitem(sys.modules, "dcsm.service.cli", module)


def test_service_commands_are_dispatched(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    seen = {}

    def add_commands(sub) -> None:  # type: ignore[no-untyped-def]
        p = sub.add_parser("serve", help="run the service")
        p.add_argument("--port", type=int, default=8000)
        p.set_defaults(func=lambda args: seen.setdefault("port", args.port) and 7)

    _fake_service(monkeypatch, add_commands)
    assert main(["serve", "--port", "9100"]) == 7
    assert seen == {"port": 9100}
    # Bad arguments of a service command: the same one-line error.
    code, _, err = run(capsys, "serve", "--port", "x")
    assert code == 2 and err.count("\n") == 1 and "argument --port" in err


def test_broken_service_package_leaves_the_rest_working(monkeypatch, capsys, workload) -> None:  # type: ignore[no-untyped-def]
    def add_commands(sub) -> None:  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    _fake_service(monkeypatch, add_commands)
    code, out, _ = run(
        capsys, "match", "--graph", workload["graph"], "--query", workload["triangle"], "--json"
    )
    assert code == 0 and json.loads(out)["queries"][0]["name"] == "triangle"
    code, _, err = run(capsys, "serve")
    assert code == 2 and err.count("\n") == 1
    assert "invalid choice: 'serve'" in err and "service commands failed to load" in err
