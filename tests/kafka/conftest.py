"""Broker tests: a real tansu broker on a free loopback port (one per test worker) and
``dcsm serve`` subprocesses using it, each test on its own topics. The fixtures live in
``tests/broker_fixtures.py`` (``tests/neighbours/`` uses them too)."""

from broker_fixtures import Topics, _jit_cache, broker, make_service, topics

__all__ = ["Topics", "_jit_cache", "broker", "make_service", "topics"]
