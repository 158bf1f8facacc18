"""``latency.png``: a load generator sweep at a glance (needs matplotlib, the ``plot`` extra).

Three panels against the target rate: end-to-end latency percentiles via Kafka and via the
websocket; the achieved send rate and the processed rate beside the target; the service's
resident memory and its largest consumer lag during each step (flat memory and a lag that
recovers are what overload should look like).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def human(x: float, _pos: Any = None) -> str:
    """1500 -> '1.5K', 2000000 -> '2M' (tick labels)."""
    for div, unit in ((1e6, "M"), (1e3, "K")):
        if abs(x) >= div:
            return f"{x / div:.3g}{unit}"
    return f"{x:.3g}"


def _rate_axis(ax: Any, rates: list[float]) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    lo, hi = min(rates), max(rates)
    if hi / lo >= 5:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=_log_subs(hi / lo)))
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.xaxis.set_major_formatter(FuncFormatter(human))
    # Slanted labels: "50K 100K 200K" side by side ran together on a 5-inch panel.
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_xlabel("target rate (updates/s)")


def _log_subs(span: float) -> tuple[float, ...]:
    """Labelled ticks per decade for a log axis spanning a factor ``span``: at most about
    eight labels however wide the sweep."""
    if span <= 150:
        return (1.0, 2.0, 5.0)
    if span <= 2000:
        return (1.0, 3.0)
    return (1.0,)


def _col(results: list[dict[str, Any]], *keys: str) -> np.ndarray:
    out = []
    for r in results:
        v: Any = r
        for k in keys:
            v = v.get(k) if isinstance(v, dict) else None
        out.append(np.nan if v is None else float(v))
    return np.asarray(out)


def plot(results: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    rates = [float(r["target_rate"]) for r in results]
    fig, (ax, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.4))
    for key, style, path_name in (("e2e_kafka_ms", "-", "Kafka"), ("e2e_websocket_ms", "--", "ws")):
        for pct, color in (("p50", "tab:blue"), ("p95", "tab:orange"), ("p99", "tab:red")):
            ax.plot(rates, _col(results, key, pct), style, marker="o", ms=3, color=color,
                    label=f"{pct} via {path_name}")  # fmt: skip
    ax.set_ylabel("end-to-end latency (ms)")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title("latency (scheduled send -> frame received)")

    ax2.plot(rates, rates, ":", color="gray", label="target")
    ax2.plot(rates, _col(results, "send_rate"), marker="s", ms=3, label="sent")
    ax2.plot(rates, _col(results, "throughput"), marker="o", ms=3, label="processed")
    for r in results:
        if r.get("sustained"):
            ax2.plot([r["target_rate"]], [r["throughput"]], "o", ms=8, mfc="none", color="green")
    ax2.plot([], [], "o", ms=8, mfc="none", color="green", label="sustained")
    ax2.set_ylabel("updates/s")
    ax2.set_title("send rate and throughput")
    if max(rates) / min(rates) >= 5:
        ax2.set_yscale("log")
        ax2.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax2.yaxis.set_minor_formatter(NullFormatter())
    ax2.yaxis.set_major_formatter(FuncFormatter(human))

    rss = _col(results, "rss_bytes") / 2**20
    ax3.plot(rates, rss, marker="o", ms=3, color="tab:purple", label="service RSS (MiB)")
    ax3.set_ylabel("RSS at end of step (MiB)")
    ax3.set_ylim(0, max(1.0, float(np.nanmax(rss, initial=0.0))) * 1.15)
    lag_ax = ax3.twinx()
    lag_ax.plot(rates, _col(results, "max_consumer_lag"), marker="^", ms=3, color="tab:brown",
                label="max consumer lag (records)")  # fmt: skip
    lag_ax.set_ylabel("records behind the topic end")
    lag_ax.yaxis.set_major_locator(MaxNLocator(6, integer=True))
    lag_ax.yaxis.set_major_formatter(FuncFormatter(human))
    lag = _col(results, "max_consumer_lag")
    lag_ax.set_ylim(0, max(1.0, float(np.nanmax(lag, initial=0.0))) * 1.15)
    ax3.set_title("memory and consumer lag")
    lines = ax3.get_legend_handles_labels()
    more = lag_ax.get_legend_handles_labels()
    ax3.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc="upper left")

    for a in (ax, ax2, ax3):
        _rate_axis(a, rates)
        a.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax2.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
