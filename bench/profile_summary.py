"""Where the CPU time of a py-spy profile goes: a markdown table by category and thread.

Reads py-spy ``--format raw`` files (collapsed stacks, one ``frame;frame;... count`` line per
distinct stack; record with ``--threads`` so each stack starts with ``thread (TID): NAME``)
and sorts every sample into a category by regular expressions on its frames.

Usage::

    python bench/profile_summary.py serve-50000.raw [more.raw ...] [--rate 100]
        [--cpu-steps cpu-steps.tsv --step 50000] [--rules rules.tsv] [--top 5]
        [--title TEXT] [--json out.json]

Several files are summed (``.gz`` ones too). A sample is worth ``1/--rate`` s of one core
(py-spy's default leaves idle threads out, so samples count time a thread was running or
runnable, which includes waiting for the GIL and, in py-spy's default blocking mode, the
pauses py-spy itself imposes: hence the scaled columns below).
``--cpu-steps`` takes the per-thread CPU seconds that ``scripts/service-bench.sh`` measured
from ``/proc`` (columns ``rate, seconds, id, comm, cpu_s``) and adds columns that scale each
thread's categories to its measured CPU time, and cores (= CPU s / wall s of the step).

**Rules.** Each rule is ``(tier, category, regex)``; a regex is searched in each frame
written as ``function (file)`` (no line number; py-spy shortens files to their package path,
e.g. ``dcsm/service/codec.py``, ``aiokafka/consumer/fetcher.py``). A sample goes to the
innermost frame's category among the frames matched by the lowest tier present: tier 1 rules
name the service's own stages and specific libraries, tier 2 shared plumbing (the aiokafka
connection, HTTP), tier 3 the event loop itself. So ``fanout -> count_frames -> json.dumps``
is frame encoding, ``Fetcher -> AIOKafkaConnection.send`` is consume, and a stack of only
``_run_once -> select`` is loop overhead. Within one frame the first rule listed wins. A
sample that matches nothing is ``other``; one with no Python frame at all is ``no Python
frame``. ``--rules FILE`` replaces the built-in rules with lines ``tier<TAB>category<TAB>regex``
(``#`` comments); ``--top N`` lists each category's most frequent innermost frames.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

OTHER = "other"
NO_FRAME = "no Python frame"

# (tier, category, regex on "function (file)"). Order matters only within one frame.
# fmt: off
DEFAULT_RULES: list[tuple[int, str, str]] = [
    # -- tier 1: the service's stages and the libraries specific to one of them -------------
    (1, "engine thread waits for work", r"^EngineWorker\._take "),
    (1, "engine hand-off", r"^EngineWorker\.(submit|_emit|event_done) |"
        r"call_soon_threadsafe|_write_to_self|_read_from_self|SimpleQueue"),
    (1, "decode", r"^(decode_\w*|merge|validation_details|_element_error) \(.*service/codec\.py|"
        r"\(pydantic|\(pydantic_core|\(orjson|\(json/decoder\.py"),
    (1, "frame encoding", r"^(delta_frames|count_frames|gap_frame|end_frame)\b.*service/codec\.py"),
    (1, "sequencing", r"service/sequencer\.py"),
    (1, "engine", r"^EngineWorker\.(_run|_apply|_control) |\(dcsm/gpu/|\(dcsm/engine/|"
        r"\(gpu/|\(cupy|\(numba"),
    (1, "metrics", r"service/metrics\.py|\(prometheus_client"),
    (1, "aiokafka produce", r"service/outputs\.py|\(aiokafka/producer/"),
    (1, "aiokafka consume", r"service/ingest\.py|\(aiokafka/consumer/"),
    (1, "fan-out", r"service/fanout\.py|service/subscribers\.py|service/queries\.py"),
    (1, "websocket", r"\(websockets/|\(uvicorn/protocols/websockets/|\(starlette/websockets\.py|"
        r"^(stream|matches|counts|_install_websockets\.\S*) \(.*service/api\.py"),
    (1, "lifecycle (snapshot, stop)", r"service/snapshot\.py|^Service\.(stop|drain)"),
    # -- tier 2: plumbing shared by several stages -------------------------------------------
    (2, "aiokafka shared (client, conn)", r"\(aiokafka/|\(async_timeout/"),
    (2, "HTTP API", r"\(uvicorn/(protocols|middleware)/|\(h11/|\(fastapi/|\(starlette/|"
        r"\(httptools|service/api\.py"),
    # -- tier 3: the event loop itself ---------------------------------------------------------
    (3, "asyncio loop overhead/idle", r"\(asyncio/|\(selectors\.py|\(uvloop"),
]
# fmt: on

# Display order of the categories (others follow, sorted).
ORDER = [
    "decode", "sequencing", "engine", "engine hand-off", "engine thread waits for work",
    "fan-out", "frame encoding", "aiokafka produce", "aiokafka consume",
    "aiokafka shared (client, conn)", "websocket", "HTTP API", "metrics",
    "lifecycle (snapshot, stop)", "asyncio loop overhead/idle",
]  # fmt: skip

THREAD_RE = re.compile(r"^thread \((?P<tid>[^)]*)\)(?::\s*(?P<name>.*))?$")
PROCESS_RE = re.compile(r"^process \d+")
LINE_RE = re.compile(r":\d+\)$")


@dataclass
class Rule:
    tier: int
    category: str
    regex: re.Pattern[str]


@dataclass
class Summary:
    """Samples by (thread, category), plus the innermost frames behind each category."""

    samples: Counter[tuple[str, str]] = field(default_factory=Counter)
    frames: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    thread_names: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.samples.values())


def load_rules(path: str | None) -> list[Rule]:
    rows: Iterable[tuple[int, str, str]] = DEFAULT_RULES
    if path:
        rows = []
        for n, line in enumerate(Path(path).read_text().splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 3 or not parts[0].strip().isdigit():
                raise SystemExit(f"{path}:{n}: expected tier<TAB>category<TAB>regex")
            rows.append((int(parts[0]), parts[1].strip(), parts[2]))
    return [Rule(t, c, re.compile(r)) for t, c, r in rows]


def strip_line(frame: str) -> str:
    """``func (file:123)`` -> ``func (file)``."""
    return LINE_RE.sub(")", frame)


def classify(frames: Sequence[str], rules: Sequence[Rule]) -> tuple[str, str]:
    """(category, deciding frame) of one stack, frames outermost first, without line numbers."""
    if not frames:
        return NO_FRAME, ""
    best: dict[int, tuple[str, str]] = {}  # tier -> innermost (category, frame)
    for frame in frames:  # outermost first: a later (inner) match overwrites
        for rule in rules:
            if rule.regex.search(frame):
                best[rule.tier] = (rule.category, frame)
                break
    if not best:
        return OTHER, frames[-1]
    return best[min(best)]


def read_raw(paths: Sequence[str], rules: Sequence[Rule]) -> Summary:
    out = Summary()
    memo: dict[tuple[str, ...], tuple[str, str]] = {}
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", errors="replace") as f:
            for line in f:
                stack, _, count = line.rstrip("\n").rpartition(" ")
                if not stack or not count.isdigit():
                    continue
                parts = stack.split(";")
                thread = "process"
                while parts and (PROCESS_RE.match(parts[0]) or THREAD_RE.match(parts[0])):
                    m = THREAD_RE.match(parts.pop(0))
                    if m:
                        thread = m.group("tid")
                        out.thread_names.setdefault(thread, (m.group("name") or "").strip())
                frames = tuple(strip_line(p) for p in parts if p)
                if frames not in memo:
                    memo[frames] = classify(frames, rules)
                category, frame = memo[frames]
                n = int(count)
                out.samples[thread, category] += n
                out.frames[category][frame or category] += n
    return out


def thread_label(tid: str, name: str) -> str:
    role = {"MainThread": "main loop", "dcsm-engine": "engine"}.get(name, name or "thread")
    return f"{role} ({tid})"


def read_cpu(path: str, step: str | None) -> dict[str, tuple[float, float]]:
    """{tid: (cpu seconds, wall seconds)} of one step of a cpu-steps.tsv."""
    got: dict[str, tuple[float, float]] = {}
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if step is None or row["rate"] == step:
                got[row["id"]] = (float(row["cpu_s"]), float(row["seconds"]))
    return got


def fmt(x: float) -> str:
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def render(
    s: Summary, rate: float, cpu: dict[str, tuple[float, float]] | None, top: int, title: str
) -> str:
    cats_seen = {c for _, c in s.samples}
    categories = [c for c in ORDER if c in cats_seen]
    categories += sorted(c for c in cats_seen if c not in categories)
    by_thread: Counter[str] = Counter()
    for (t, _), n in s.samples.items():
        by_thread[t] += n
    threads = [t for t, _ in by_thread.most_common()]
    # Scale factor per thread: measured CPU s / sampled s (1 where not measured).
    scale = {t: 1.0 for t in threads}
    wall = None
    if cpu:
        for t in threads:
            if t in cpu and by_thread[t]:
                scale[t] = cpu[t][0] / (by_thread[t] / rate)
        walls = [w for _, w in cpu.values()]
        wall = max(walls) if walls else None
    lines = [f"### {title}", ""] if title else []
    total_s = s.total / rate
    lines.append(
        f"{s.total} samples at {rate:g}/s = {total_s:.2f} s of sampled (running or runnable) "
        f"thread time" + (f"; step wall time {wall:.2f} s" if wall else "") + "."
    )
    lines.append("")
    head = ["category", "sampled s", "%"]
    head += [thread_label(t, s.thread_names.get(t, "")) + " s" for t in threads]
    if cpu:
        head += ["CPU s (scaled)", "cores" if wall else ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    scaled_total = 0.0
    for c in categories:
        n = sum(s.samples[t, c] for t in threads)
        row = [c, fmt(n / rate), f"{100 * n / max(s.total, 1):.1f}"]
        row += [fmt(s.samples[t, c] / rate) for t in threads]
        if cpu:
            sc = sum(s.samples[t, c] / rate * scale[t] for t in threads)
            scaled_total += sc
            row += [fmt(sc), fmt(sc / wall) if wall else ""]
        lines.append("| " + " | ".join(row) + " |")
    row = ["**total**", fmt(total_s), "100.0"] + [fmt(by_thread[t] / rate) for t in threads]
    if cpu:
        row += [fmt(scaled_total), fmt(scaled_total / wall) if wall else ""]
    lines.append("| " + " | ".join(row) + " |")
    if cpu:
        lines += ["", "| thread | sampled s | measured CPU s (/proc) |", "|---|---|---|"]
        for t in threads:
            meas = fmt(cpu[t][0]) if t in cpu else "-"
            name = thread_label(t, s.thread_names.get(t, ""))
            lines.append(f"| {name} | {fmt(by_thread[t] / rate)} | {meas} |")
    if top:
        lines += ["", "Innermost deciding frames per category (samples):", ""]
        for c in categories:
            items = s.frames[c].most_common(top)
            desc = "; ".join(f"`{f}` {n}" for f, n in items)
            lines.append(f"* **{c}**: {desc}")
    return "\n".join(lines) + "\n"


def to_json(s: Summary, rate: float) -> dict[str, object]:
    return {
        "rate": rate,
        "samples": s.total,
        "threads": {t: s.thread_names.get(t, "") for t in {t for t, _ in s.samples}},
        "seconds": [
            {"thread": t, "category": c, "seconds": n / rate} for (t, c), n in s.samples.items()
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("raw", nargs="+", help="py-spy --format raw files (summed)")
    p.add_argument("--rate", type=float, default=100.0, help="py-spy samples a second (100)")
    p.add_argument("--rules", help="rules file: tier<TAB>category<TAB>regex lines")
    p.add_argument("--cpu-steps", help="cpu-steps.tsv from scripts/service-bench.sh")
    p.add_argument("--step", help="with --cpu-steps: the rate step to take (e.g. 50000)")
    p.add_argument("--top", type=int, default=0, help="list each category's top N frames")
    p.add_argument("--title", default="", help="heading of the table")
    p.add_argument("--json", help="also write the seconds by thread and category here")
    a = p.parse_args(argv)
    summary = read_raw(a.raw, load_rules(a.rules))
    if not summary.total:
        print(f"no samples in {', '.join(a.raw)}", file=sys.stderr)
        return 1
    cpu = read_cpu(a.cpu_steps, a.step) if a.cpu_steps else None
    sys.stdout.write(render(summary, a.rate, cpu, a.top, a.title))
    if a.json:
        Path(a.json).write_text(json.dumps(to_json(summary, a.rate), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
