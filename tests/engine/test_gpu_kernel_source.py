"""The GPU kernel's source as the loader hands it to CuPy (no GPU needed): one text with
every part spliced in, in the main file's order, and each part opening with its layout
block."""

from __future__ import annotations

import re
from pathlib import Path

from dcsm.gpu import loader

GPU = Path(loader.__file__).parent


def parts() -> list[str]:
    return re.findall(r'^#include "([a-z_]+\.cuh)"$', loader.SOURCE.read_text(), re.MULTILINE)


def test_every_part_is_spliced_in_order() -> None:
    names = parts()
    assert len(names) >= 8 and len(set(names)) == len(names)
    text = loader.kernel_source()
    assert "#include" not in text  # CuPy's cache would not see an included header change
    at = [text.index(GPU.joinpath(n).read_text()) for n in names]
    assert at == sorted(at)
    assert text.rstrip().endswith("}")  # the kernel entry point closes the text


def test_the_static_matcher_shares_the_spliced_headers() -> None:
    """static_match.cu includes warp_lanes.cuh and search_steps.cuh as the persistent kernel
    does: the text CuPy compiles has them spliced in, and no include left."""
    static = GPU / "static_match.cu"
    text = loader.kernel_source(static)
    assert "#include" not in text
    for name in ("warp_lanes.cuh", "search_steps.cuh"):
        assert GPU.joinpath(name).read_text() in text, name
        assert name in parts(), name


def test_parts_open_with_what_they_own() -> None:
    for name in parts():
        head = GPU.joinpath(name).read_text().split("\n\n", 1)[0]
        assert head.startswith(f"// {name} -- "), name
        assert "write" in head or "Buffers" in head, f"{name}: no layout block"


def test_the_knobs_live_in_one_fenced_block() -> None:
    layout = GPU.joinpath("layout.cuh").read_text()
    for knob in ("N_UPDATERS", "BATCH_CAP", "DONATE_EVERY", "HELP_MASK", "CHECK"):
        assert f"#ifndef {knob}\n" in layout, knob
    rest = loader.kernel_source().replace(layout, "")
    assert "#ifndef" not in rest
