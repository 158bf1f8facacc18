"""Neighbour tests: clients and tools nobody here wrote (kcat, confluent-kafka/librdkafka,
Prometheus and promtool) against a real tansu broker and real ``dcsm serve`` processes. Each
skips, naming ``scripts/install-neighbours.sh``, where its tool is missing. The broker and
service fixtures are the Kafka tests' (``tests/broker_fixtures.py``)."""

from broker_fixtures import Topics, _jit_cache, broker, make_service, topics

__all__ = ["Topics", "_jit_cache", "broker", "make_service", "topics"]
