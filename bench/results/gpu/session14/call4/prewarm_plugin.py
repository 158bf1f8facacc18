"""pytest plugin (-p prewarm_plugin): a test ends, skipped, once its first kernel is compiled
into CuPy's cache, so that shards of the test files run side by side fill the cache before the
real, serial run (a cold build is ~10 s a config, and the engine test file has ~35)."""

import pytest

import dcsm.gpu.engine as engine

_load = engine.load_kernel


def _compile_then_skip(config):  # type: ignore[no-untyped-def]
    _load(config)
    pytest.skip("prewarm: kernel compiled")


engine.load_kernel = _compile_then_skip
