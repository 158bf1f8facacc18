"""The ``dcsm`` command line.

Subcommands (each parser sets ``func``, a function of the parsed Namespace returning the exit
status):

* ``replay``      apply a stream file to a graph with some queries; counts or every delta.
* ``match``       count the matches of queries in a static graph.
* ``gen-graph``   write a seeded synthetic power-law graph.
* ``gen-stream``  split a graph into an initial graph and an update stream (DCSM protocol).
* ``serve``, ``demo``, ``loadgen`` and whatever else ``dcsm.service.cli.add_commands``
  adds, when the service package is installed.

Every error a user can cause (a :class:`~dcsm.errors.DcsmError`, an unreadable or unwritable
file, bad arguments) ends the command with exit status 2 and exactly one line on stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, NoReturn

import numpy as np

from . import __version__
from .argtypes import number, path, positive_int, seed
from .errors import DcsmError, InputFileError
from .gpu_options import add_gpu_args, engine_options
from .model import OUTCOME_NAMES, Pattern, UpdateBatch

EXIT_OK = 0
EXIT_ERROR = 2
DEFAULT_BATCH = 4096
SERVICE_CLI = "dcsm.service.cli"
Command = Callable[[argparse.Namespace], int]


class UsageError(DcsmError):
    """Bad command-line arguments (argparse's complaint, as one line)."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing usage and exiting, so that every
    error leaves as one line through :func:`main`."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message}")


# -- input ---------------------------------------------------------------------------------


def load_query(path: str, *, distinct: bool = False) -> Pattern:
    """A query file: CSM text, or a JSON :class:`~dcsm.schemas.QuerySpec` when the name ends
    in ``.json``. The pattern is named after the file's stem either way."""
    from .graphio import read_csm_query

    if not path.endswith(".json"):
        pattern = read_csm_query(path)
    else:
        from pydantic import ValidationError

        from .schemas import QuerySpec, one_line

        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputFileError(path, None, _os_reason(exc)) from None
        try:
            pattern = QuerySpec.model_validate_json(text).to_pattern()
        except ValidationError as exc:
            raise InputFileError(path, None, one_line(exc)) from None
    pattern = dataclasses.replace(
        pattern, name=Path(path).stem, distinct=distinct or pattern.distinct
    )
    if pattern.distinct:
        from .engine.plan import plan_query

        try:
            plan_query(pattern)  # distinct needs a checkable symmetry: fail before loading
        except DcsmError as exc:
            raise InputFileError(path, None, str(exc)) from None
    return pattern


def load_queries(paths: Sequence[str], *, distinct: bool = False) -> list[Pattern]:
    """The query files ``paths`` (:func:`load_query`), refused when two share a name: their
    results would be told apart by nothing."""
    seen: dict[str, str] = {}
    for file in paths:
        name = Path(file).stem
        if name in seen:
            raise DcsmError(f"--query: {seen[name]} and {file} are both named {name!r}")
        seen[name] = file
    return [load_query(p, distinct=distinct) for p in paths]


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


# -- replay --------------------------------------------------------------------------------


class DeltaWriter:
    """Writes deltas as JSON lines ``{"query": name, "sign": s, "seq": i, "match": [...]}``.

    Lines are formatted a block at a time with one ``%`` per block of rows that belong to the
    same query (the template has the query's name and vertex count baked in), which is about
    an order of magnitude faster than building and serialising a dict per line.
    """

    BLOCK = 1 << 15

    def __init__(self, fh: IO[str], names: Sequence[str], widths: Sequence[int]) -> None:
        self._fh = fh
        self._widths = list(widths)
        self._templates = []
        for name, width in zip(names, widths, strict=True):
            quoted = json.dumps(name).replace("%", "%%")
            ids = ", ".join(["%d"] * width)
            self._templates.append(
                f'{{"query": {quoted}, "sign": %d, "seq": %d, "match": [{ids}]}}\n'
            )
        self.lines = 0

    def write(
        self, query: np.ndarray, sign: np.ndarray, seq: np.ndarray, match: np.ndarray
    ) -> None:
        """query int32 (k,) query index; sign int8 (k,); seq int64 (k,); match int64 (k, w)
        with w >= every query's width (extra columns are ignored)."""
        k = int(query.shape[0])
        if k == 0:
            return
        cuts = np.flatnonzero(np.diff(query)) + 1
        starts = np.concatenate([[0], cuts]).tolist()
        stops = np.concatenate([cuts, [k]]).tolist()
        for s, e in zip(starts, stops, strict=True):
            q = int(query[s])
            w = self._widths[q]
            for b in range(s, e, self.BLOCK):
                c = min(e, b + self.BLOCK)
                rows = np.empty((c - b, w + 2), np.int64)
                rows[:, 0] = sign[b:c]
                rows[:, 1] = seq[b:c]
                rows[:, 2:] = match[b:c, :w]
                self._fh.write((self._templates[q] * (c - b)) % tuple(rows.ravel().tolist()))
        self.lines += k


@contextmanager
def _progress(total: int, label: str) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on stderr when stdout is a terminal; else a no-op advance."""
    if not sys.stdout.isatty() or total == 0:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = (label, BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


def replay(
    graph_path: str,
    updates_path: str,
    query_paths: Sequence[str],
    *,
    backend: str = "auto",
    emit: str | None = None,
    batch_size: int = DEFAULT_BATCH,
    distinct: bool = False,
    gpu_options: Mapping[str, float] | None = None,
) -> dict:
    """Run a replay and return its report (what ``--json`` prints, plus ``outcomes``).
    ``gpu_options``: ``GpuEngine`` keyword arguments, used when the GPU engine runs."""
    from .engine import make_engine, warm_up
    from .graphio import read_csm_stream, read_graph

    warm_up(backend)  # JIT compilation stays out of the timed seconds
    graph = read_graph(graph_path)
    stream = read_csm_stream(updates_path)
    patterns = load_queries(query_paths, distinct=distinct)
    names = [p.name for p in patterns]
    nq = len(patterns)
    engine = make_engine(backend, gpu_options=gpu_options)
    count_only = emit is None
    try:
        engine.load_graph(graph)
        del graph
        for qid, pattern in enumerate(patterns):
            engine.register(qid, pattern, from_seq=0, count_only=count_only)
        positive = np.zeros(nq, np.int64)
        negative = np.zeros(nq, np.int64)
        outcomes = np.zeros(len(OUTCOME_NAMES), np.int64)
        seconds = 0.0
        with _open_emit(emit) as fh, _progress(len(stream), "replay") as advance:
            writer = DeltaWriter(fh, names, [p.num_vertices for p in patterns]) if fh else None
            for start in range(0, len(stream), batch_size):
                batch: UpdateBatch = stream.slice(start, start + batch_size)
                t0 = time.perf_counter()
                result = engine.apply(batch)
                seconds += time.perf_counter() - t0
                outcomes += np.bincount(result.outcome, minlength=len(OUTCOME_NAMES))
                if count_only:
                    c = result.counts
                    np.add.at(positive, c.query[c.sign > 0], c.count[c.sign > 0])
                    np.add.at(negative, c.query[c.sign < 0], c.count[c.sign < 0])
                else:
                    d = result.deltas
                    positive += np.bincount(d.query[d.sign > 0], minlength=nq)
                    negative += np.bincount(d.query[d.sign < 0], minlength=nq)
                    if writer is not None:
                        writer.write(d.query, d.sign, d.seq, d.match)
                advance(len(batch))
    finally:
        engine.close()
    return {
        "backend": engine.backend,
        "updates": len(stream),
        "seconds": seconds,
        "queries": [
            {"name": name, "positive": int(p), "negative": int(n)}
            for name, p, n in zip(names, positive.tolist(), negative.tolist(), strict=True)
        ],
        "outcomes": {OUTCOME_NAMES[i]: int(x) for i, x in enumerate(outcomes.tolist())},
    }


@contextmanager
def _open_emit(path: str | None) -> Iterator[IO[str] | None]:
    if path is None:
        yield None
        return
    fh = sys.stdout if path == "-" else open(path, "w", encoding="utf-8", buffering=1 << 20)
    try:
        yield fh
    finally:
        if fh is not sys.stdout:
            fh.close()


def cmd_replay(args: argparse.Namespace) -> int:
    if args.count_only and args.emit is not None:
        raise UsageError("dcsm replay: error: --count-only and --emit exclude each other")
    if args.emit == "-" and args.json:
        raise UsageError("dcsm replay: error: --emit - and --json would both write to stdout")
    report = replay(
        args.graph,
        args.updates,
        args.query,
        backend=args.backend,
        emit=args.emit,
        batch_size=args.batch_size,
        distinct=args.distinct,
        gpu_options=engine_options(args),
    )
    if args.json:
        print(json.dumps({k: v for k, v in report.items() if k != "outcomes"}))
        return EXIT_OK
    out = sys.stderr if args.emit == "-" else sys.stdout
    _print_replay_table(report, out)
    return EXIT_OK


def _print_replay_table(report: dict, out: IO[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    n, secs = report["updates"], report["seconds"]
    rate = f", {n / secs:,.0f} updates/s" if secs > 0 else ""
    outcomes = ", ".join(f"{k} {v:,}" for k, v in report["outcomes"].items() if v)
    console = Console(file=out)
    console.print(f"{n:,} updates on {report['backend']} in {secs:.3f} s{rate}")
    console.print(f"outcomes: {outcomes or 'none'}")
    table = Table()
    for col in ("query", "positive", "negative", "net change"):
        table.add_column(col, justify="left" if col == "query" else "right")
    for q in report["queries"]:
        p, m = q["positive"], q["negative"]
        table.add_row(q["name"], f"{p:,}", f"{m:,}", f"{p - m:+,}")
    console.print(table)


# -- match ---------------------------------------------------------------------------------


def cmd_match(args: argparse.Namespace) -> int:
    from .engine import make_engine
    from .graphio import read_graph

    graph = read_graph(args.graph)
    patterns = load_queries(args.query, distinct=args.distinct)
    engine = make_engine(args.backend, gpu_options=engine_options(args))
    try:
        engine.load_graph(graph)
        counts = [engine.count_static(p) for p in patterns]
    finally:
        engine.close()
    rows = [{"name": p.name, "matches": int(c)} for p, c in zip(patterns, counts, strict=True)]
    if args.json:
        print(json.dumps({"queries": rows}))
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table

    kind = "subgraphs" if args.distinct else "embeddings"
    console = Console()
    console.print(f"{kind} in {args.graph} ({engine.backend})")
    table = Table()
    table.add_column("query")
    table.add_column("matches", justify="right")
    for r in rows:
        table.add_row(r["name"], f"{r['matches']:,}")
    console.print(table)
    return EXIT_OK


# -- workload generation -------------------------------------------------------------------


def cmd_gen_graph(args: argparse.Namespace) -> int:
    import time

    from .graphio import write_graph
    from .loadgen.gen_stream import PRESETS, WorkloadError, chunglu_graph, powerlaw_graph

    t0 = time.time()
    preset = PRESETS.get(args.preset or "", {})
    chung_lu = args.model == "chung-lu" or bool(preset)
    other = _HOLME_KIM_ONLY if chung_lu else _CHUNG_LU_ONLY  # given: not at the default
    wrong = [_flag(k) for k in other if getattr(args, k) != _GEN_GRAPH_DEFAULTS.get(k)]
    if wrong:
        model = "chung-lu" if chung_lu else "holme-kim"
        raise WorkloadError(f"{', '.join(wrong)}: not an option of --model {model}")
    if chung_lu:
        edges = args.edges or int(preset.get("edges", 0))
        if not edges:
            raise WorkloadError("--model chung-lu needs --edges (or --preset)")
        graph = chunglu_graph(
            edges, args.vertices or preset.get("vertices"),  # type: ignore[arg-type]
            gamma=args.gamma if args.gamma is not None else float(preset.get("gamma", 2.3)),
            labels=args.labels,
            edge_labels=args.edge_labels, seed=args.seed,
        )  # fmt: skip
    else:
        if not args.vertices:
            raise WorkloadError("--model holme-kim needs --vertices")
        graph = powerlaw_graph(
            args.vertices, args.edges_per_vertex, triangle_prob=args.triangle_prob,
            labels=args.labels, seed=args.seed,
        )  # fmt: skip
    _parent(args.out)
    write_graph(args.out, graph)
    print(
        f"wrote {args.out}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges "
        f"in {time.time() - t0:.1f}s"
    )
    return EXIT_OK


def cmd_gen_stream(args: argparse.Namespace) -> int:
    from .graphio import read_graph, write_csm_graph, write_csm_stream
    from .loadgen.gen_stream import dcsm_workload

    graph = read_graph(args.graph)
    work = dcsm_workload(
        graph,
        insert_fraction=args.insert_fraction,
        delete_fraction=args.delete_fraction,
        labels=args.labels,
        rate=args.rate,
        seed=args.seed,
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csm_graph(out / "initial.graph", work.initial)
    write_csm_stream(out / "stream.updates", work.stream, timestamps=args.rate is not None)
    print(
        f"wrote {out / 'initial.graph'} ({work.initial.num_vertices:,} vertices, "
        f"{work.initial.num_edges:,} edges) and {out / 'stream.updates'} "
        f"({work.num_insertions:,} insertions, {work.num_deletions:,} deletions)"
    )
    return EXIT_OK


def _parent(path: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)


# -- parser --------------------------------------------------------------------------------


# gen-graph's options that belong to one --model; those with a default other than None take
# it from here, in the parser and in the check that refuses the other model's options.
_CHUNG_LU_ONLY = ("edges", "gamma", "edge_labels")
_HOLME_KIM_ONLY = ("edges_per_vertex", "triangle_prob")
_GEN_GRAPH_DEFAULTS = {"edge_labels": 1, "edges_per_vertex": 4, "triangle_prob": 0.5}


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _label_count(text: str) -> int:
    """How many labels: 1 to MAX_LABEL + 1 (labels are 32-bit; more wrapped to negatives)."""
    from .graphio import MAX_LABEL

    x = positive_int(text)
    if x > MAX_LABEL + 1:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_LABEL + 1:,}, got {x}")
    return x


def _add_engine_args(p: argparse.ArgumentParser, *, with_updates: bool) -> None:
    p.add_argument("--graph", required=True, help="data graph: CSM text or SNAP edge list")
    if with_updates:
        p.add_argument("--updates", required=True, help="CSM stream file (e / -e lines)")
    p.add_argument(
        "--query",
        required=True,
        action="append",
        metavar="Q",
        help="query file, CSM text or QuerySpec .json (repeat for several; name = file stem)",
    )
    p.add_argument(
        "--backend",
        choices=("auto", "cpu", "gpu"),
        default="auto",
        help="matching engine (auto: the GPU when CuPy sees a device, else the CPU)",
    )
    p.add_argument(
        "--distinct",
        action="store_true",
        help="count each matching subgraph once instead of every embedding",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_gpu_args(p, with_defaults=True)


def build_parser() -> tuple[argparse.ArgumentParser, str | None]:
    """The full parser and, when the service commands could not be loaded, why."""
    parser = _Parser(
        prog="dcsm",
        description="Continuous subgraph matching over streams of edge updates.",
    )
    parser.add_argument("--version", action="version", version=f"dcsm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "replay",
        help="apply an update stream to a graph and count or emit match deltas",
        description="Apply a CSM update stream to a graph, in batches, and report for every "
        "query the matches the stream created (positive) and destroyed (negative).",
    )
    _add_engine_args(p, with_updates=True)
    p.add_argument(
        "--emit",
        type=path,
        metavar="FILE",
        help="write every delta as a JSON line to FILE ('-' = stdout); matches are then "
        "enumerated, not just counted",
    )
    p.add_argument(
        "--count-only",
        action="store_true",
        help="count matches without enumerating them (the default without --emit)",
    )
    p.add_argument(
        "--batch-size",
        type=positive_int,
        default=DEFAULT_BATCH,
        metavar="N",
        help=f"updates per engine call (default {DEFAULT_BATCH})",
    )
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("match", help="count the matches of queries in a static graph")
    _add_engine_args(p, with_updates=False)
    p.set_defaults(func=cmd_match)

    p = sub.add_parser(
        "gen-graph",
        help="write a seeded synthetic power-law graph (CSM text, or binary for .npz)",
        description="Holme-Kim (preferential attachment plus triangle closing; the default) "
        "or Chung-Lu (vectorised: tens of millions of edges in about a minute). An --out "
        "ending in .npz gets the binary graph format (see dcsm.graphio), read without "
        "per-line parsing.",
    )
    p.add_argument("--model", choices=["holme-kim", "chung-lu"], default="holme-kim")
    p.add_argument(
        "--preset",
        choices=["livejournal"],
        help="chung-lu at LiveJournal's size: 4.8M vertices, 43M edges, gamma 2.3",
    )
    p.add_argument(
        "--vertices", type=positive_int, metavar="N", help="vertices (chung-lu default: edges / 9)"
    )
    p.add_argument("--edges", type=positive_int, metavar="N", help="chung-lu: distinct edges")
    p.add_argument(
        "--gamma", type=number(2), metavar="G", help="chung-lu degree exponent > 2 (default 2.3)"
    )
    p.add_argument(
        "--edge-labels",
        type=_label_count,
        default=_GEN_GRAPH_DEFAULTS["edge_labels"],
        metavar="L",
        help="random edge labels 0..L-1 (chung-lu; default 1: all 0)",
    )
    p.add_argument(
        "--edges-per-vertex",
        type=positive_int,
        default=_GEN_GRAPH_DEFAULTS["edges_per_vertex"],
        metavar="M",
        help="edges each arriving vertex brings (default %(default)s)",
    )
    p.add_argument(
        "--triangle-prob",
        type=number(0, or_equal=True),
        default=_GEN_GRAPH_DEFAULTS["triangle_prob"],
        metavar="P",
        help="probability that a further edge closes a triangle (default %(default)s)",
    )
    p.add_argument(
        "--labels",
        type=_label_count,
        default=1,
        metavar="L",
        help="random vertex labels 0..L-1 (default 1: all 0)",
    )
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--out", type=path, required=True, metavar="FILE", help="graph file to write")
    p.set_defaults(func=cmd_gen_graph)

    p = sub.add_parser(
        "gen-stream",
        help="split a graph into an initial graph and an update stream",
        description="DCSM protocol: a random 45%% of the edges are held out and inserted, a "
        "random 5%% of |E| taken from the initial graph is deleted, interleaved at random. "
        "Writes OUT/initial.graph and OUT/stream.updates.",
    )
    p.add_argument("--graph", required=True, help="input graph: CSM text or SNAP edge list")
    p.add_argument("--out", type=path, required=True, metavar="DIR", help="directory to write into")
    p.add_argument(
        "--insert-fraction",
        type=float,
        default=0.45,
        metavar="F",
        help="share of |E| inserted by the stream (default 0.45)",
    )
    p.add_argument(
        "--delete-fraction",
        type=float,
        default=0.05,
        metavar="F",
        help="share of |E| deleted from the initial graph (default 0.05)",
    )
    p.add_argument(
        "--labels",
        type=_label_count,
        metavar="L",
        help="replace vertex labels with random ones in 0..L-1",
    )
    p.add_argument(
        "--rate",
        type=number(0),
        metavar="R",
        help="add arrival times (5th column, seconds from the stream start) with "
        "exponential inter-arrival times at R updates/s",
    )
    p.add_argument("--seed", type=seed, default=0)
    p.set_defaults(func=cmd_gen_stream)

    return parser, _add_service_commands(sub)


def _add_service_commands(sub: argparse._SubParsersAction) -> str | None:
    """Let the service package add its commands; returns why it could not, if it exists
    but fails to import (e.g. the ``service`` extra is not installed)."""
    try:
        found = importlib.util.find_spec(SERVICE_CLI) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return None
    try:
        module = importlib.import_module(SERVICE_CLI)
        module.add_commands(sub)
    except ImportError as exc:
        return f"the service commands need the service extra (pip install 'dcsm[service]'): {exc}"
    except Exception as exc:  # a broken service package must not take replay/match down
        return f"the service commands failed to load: {type(exc).__name__}: {exc}"
    return None


# -- entry point ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    try:
        parser, service_problem = build_parser()
        try:
            args = parser.parse_args(argv)
        except UsageError as exc:
            if service_problem and "invalid choice" in str(exc):
                raise UsageError(f"{exc} ({service_problem})") from None
            raise
        func: Command = args.func
        return int(func(args))
    except KeyboardInterrupt:
        print("dcsm: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error; keep Python from
        # complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except UsageError as exc:
        _complain(str(exc))
    except DcsmError as exc:
        _complain(f"dcsm: error: {exc}")
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        _complain(f"dcsm: error: {where}{exc.strerror or exc}")
    except MemoryError:
        _complain("dcsm: error: out of memory (try a smaller --batch-size)")
    except Exception as exc:  # a bug: still one line, with a way to get the traceback
        if os.environ.get("DCSM_DEBUG"):
            raise
        _complain(
            f"dcsm: internal error: {type(exc).__name__}: {exc} "
            "(run with DCSM_DEBUG=1 for a traceback)"
        )
    return EXIT_ERROR


def _complain(message: str) -> None:
    """Print ``message`` as exactly one line on stderr."""
    print(" ".join(message.split()), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
