"""Every Prometheus metric the service exports, declared once.

Histograms fed per update or per delta would cost a Python call per observation, so the two
latency histograms are :class:`BulkHistogram`: a small custom collector that takes a numpy
array of observations per call (``searchsorted`` + ``bincount``) and renders as an ordinary
Prometheus histogram.

Each :class:`Metrics` owns its registry, so several services can live in one process (tests,
the demo) without colliding.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

import numpy as np
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

LATENCY_BUCKETS_S = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip


class BulkHistogram(Collector):
    """A histogram labelled by query that observes whole arrays at once.

    Thread-safe; observations are float seconds, any shape, NaN-free.
    """

    def __init__(self, name: str, doc: str, label: str, buckets: tuple[float, ...]) -> None:
        self._name = name
        self._doc = doc
        self._label = label
        self._edges = np.asarray(buckets, np.float64)
        self._rows: dict[str, tuple[np.ndarray, list[float]]] = {}
        self._lock = threading.Lock()

    def observe_many(self, label: str, values: np.ndarray) -> None:
        values = np.asarray(values, np.float64).ravel()
        if values.size == 0:
            return
        idx = np.searchsorted(self._edges, values, side="left")
        hits = np.bincount(idx, minlength=len(self._edges) + 1)
        with self._lock:
            row = self._rows.get(label)
            if row is None:
                row = self._rows[label] = (np.zeros(len(self._edges) + 1, np.int64), [0.0])
            row[0][:] += hits
            row[1][0] += float(values.sum())

    def remove(self, label: str) -> None:
        with self._lock:
            self._rows.pop(label, None)

    def collect(self) -> Iterable[HistogramMetricFamily]:
        fam = HistogramMetricFamily(self._name, self._doc, labels=[self._label])
        with self._lock:
            rows = [(k, v[0].copy(), v[1][0]) for k, v in self._rows.items()]
        for label, hits, total in rows:
            cum = np.cumsum(hits)
            buckets = [(repr(float(e)), int(c)) for e, c in zip(self._edges, cum[:-1], strict=True)]
            buckets.append(("+Inf", int(cum[-1])))
            fam.add_metric([label], buckets, total)
        yield fam


class KafkaErrors(Collector):
    """``dcsm_kafka_errors_total{kind}``: the process-wide Kafka error counts of
    :mod:`dcsm.service.logs` (aiokafka's loggers are process-wide too)."""

    def collect(self) -> Iterable[CounterMetricFamily]:
        from .logs import kafka_error_counts

        family = CounterMetricFamily(
            "dcsm_kafka_errors", "Kafka client errors (failed connects, fetches, ...), by kind.",
            labels=["kind"],
        )  # fmt: skip
        for kind, n in sorted(kafka_error_counts().items()):
            family.add_metric([kind], n)
        yield family


class Metrics:
    """The service's metrics on their own registry (``registry`` is what /metrics renders)."""

    def __init__(self) -> None:
        disable_created_metrics()  # no *_created series: they double the scrape for nothing
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        self.response_seconds = BulkHistogram(
            "dcsm_response_seconds",
            "Update arrival to the start of its processing by the engine, per live query.",
            "query",
            LATENCY_BUCKETS_S,
        )
        self.match_latency_seconds = BulkHistogram(
            "dcsm_match_latency_seconds",
            "Update arrival to emission of the deltas (or counts) it caused.",
            "query",
            LATENCY_BUCKETS_S,
        )
        r.register(self.response_seconds)
        r.register(self.match_latency_seconds)
        r.register(KafkaErrors())
        self.updates_total = Counter(
            "dcsm_updates_total", "Edge updates processed, by op and engine outcome.",
            ["op", "outcome"], registry=r,
        )  # fmt: skip
        self.deltas_total = Counter(
            "dcsm_deltas_total", "Match deltas emitted (count-mode: matches counted), by sign.",
            ["query", "sign"], registry=r,
        )  # fmt: skip
        self.dead_letters_total = Counter(
            "dcsm_dead_letters_total", "Input records (or elements) rejected, by reason.",
            ["reason"], registry=r,
        )  # fmt: skip
        self.gap_frames_total = Counter(
            "dcsm_websocket_dropped_frames_total",
            "Frames dropped for websocket subscribers that fell behind.", registry=r,
        )  # fmt: skip
        self.queue_depth = Gauge(
            "dcsm_queue_depth", "Items waiting per pipeline queue.", ["queue"], registry=r
        )
        self.engine_memory_bytes = Gauge(
            "dcsm_engine_memory_bytes", "Bytes held by the engine's graph arrays.", registry=r
        )
        self.queries = Gauge("dcsm_queries", "Registered queries.", registry=r)
        self.next_seq = Gauge("dcsm_next_seq", "Sequence number the next update gets.", registry=r)
        self.websocket_subscribers = Gauge(
            "dcsm_websocket_subscribers", "Open websocket subscriptions.", registry=r
        )
        self.consumer_lag = Gauge(
            "dcsm_consumer_lag",
            "Records in the input topic not yet read by the service (as of the last fetch).",
            registry=r,
        )
        self.checkpoints_total = Counter(
            "dcsm_checkpoints_total", "Checkpoints written.", registry=r
        )
        self.checkpoints_postponed_total = Counter(
            "dcsm_checkpoints_postponed_total",
            "Periodic checkpoints put off past their interval because the last export's "
            "pause would exceed checkpoint_max_pause_share of the engine's time.",
            registry=r,
        )
        self.checkpoint_failures_total = Counter(
            "dcsm_checkpoint_failures_total", "Checkpoints that could not be written.", registry=r
        )
        self.checkpoint_seconds = Histogram(
            "dcsm_checkpoint_seconds",
            "Time checkpoints spend, by phase: export (engine thread: the data path waits), "
            "flush (outputs acknowledged), write (file written and fsynced, off the data path).",
            ["phase"], buckets=LATENCY_BUCKETS_S, registry=r,
        )  # fmt: skip
        self.checkpoint_seq = Gauge(
            "dcsm_checkpoint_seq", "Next seq of the last durable checkpoint.", registry=r
        )
        self.checkpoint_bytes = Gauge(
            "dcsm_checkpoint_bytes", "Size of the last checkpoint file.", registry=r
        )

    def bind_queue(self, name: str, depth: Callable[[], float]) -> None:
        """Report ``depth()`` as the ``dcsm_queue_depth{queue=name}`` gauge at scrape time."""
        self.queue_depth.labels(name).set_function(depth)

    def forget_query(self, name: str) -> None:
        """Drop a deleted query's labelled series (a new query may reuse the name)."""
        self.response_seconds.remove(name)
        self.match_latency_seconds.remove(name)
        for sign in ("+", "-"):
            try:
                self.deltas_total.remove(name, sign)
            except KeyError:
                pass
