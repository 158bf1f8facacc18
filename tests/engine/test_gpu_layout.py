"""The host mirrors in gpu/layout.py against the kernel's structs, field by field.

``GpuEngine`` checks the offsets on the device before its kernel first runs; here the same
check runs without a GPU: the structs are compiled for the host with nvcc (where nvcc is
installed) and every field's offsetof is compared with the numpy dtype's."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from dcsm.errors import EngineError
from dcsm.gpu import layout as L
from dcsm.gpu.loader import KernelConfig, offset_expr, splice


def mirrors(cfg: KernelConfig) -> dict[str, np.dtype]:
    return {"State": L.state_dtype(cfg), "Upd": L.UPD, "Done": L.DONE, "InRec": L.IN_REC,
            "DevStatus": L.DEV_STATUS, "HostCtl": L.HOST_CTL, "Version": L.VERSION}  # fmt: skip


def test_check_offsets_names_the_first_field_that_moved() -> None:
    m = mirrors(KernelConfig())
    fields = L.mirrored_fields(m)
    right = tuple(m[s].fields[f][1] for s, f in fields)
    L.check_offsets(m, right)
    wrong = list(right)
    k = fields.index(("DevStatus", "donated"))
    wrong[k] += 8
    with pytest.raises(EngineError, match="DevStatus.donated is at byte"):
        L.check_offsets(m, tuple(wrong))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("cfg", [KernelConfig(), KernelConfig(qmax=8, nclass=20)])
def test_mirrors_match_the_structs_compiled_by_nvcc(tmp_path, cfg: KernelConfig) -> None:
    m = mirrors(cfg)
    fields = L.mirrored_fields(m)
    body = "\n".join(
        f'    std::printf("%llu\\n", (unsigned long long){offset_expr(s, f)});' for s, f in fields
    )
    src = tmp_path / "offsets.cu"
    src.write_text(splice('#include "layout.cuh"\n#include <cstdio>\n\nint main() {\n'
                          f"{body}\n}}\n"))  # fmt: skip
    exe = tmp_path / "offsets"
    subprocess.run(["nvcc", "-std=c++17", *cfg.defines(), "-o", str(exe), str(src)],
                   check=True, capture_output=True)  # fmt: skip
    got = tuple(int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True,
                                               check=True).stdout.split())  # fmt: skip
    L.check_offsets(m, got)


def test_ctx_fields_follow_the_struct() -> None:
    """The host fills struct Ctx as a uint64 array in CTX_FIELDS order: every name there is
    the struct's field at that position in gpu/layout.cuh."""
    src = (Path(L.__file__).parent / "layout.cuh").read_text()
    body = src[src.index("struct Ctx {") + len("struct Ctx {") :]
    body = re.sub(r"//[^\n]*", "", body[: body.index("};")])
    decls = [d.split() for d in body.split(";") if d.strip()]
    assert all(len(d) == 2 and "," not in d[1] for d in decls), decls  # one field each
    assert all(t.endswith("*") or t in ("u64", "i64") for t, _ in decls), decls  # 8 bytes
    assert tuple(name for _, name in decls) == L.CTX_FIELDS
