"""dcsm: continuous subgraph matching as a streaming service (GPU DCSM design, CPU oracle)."""

from pathlib import Path as _Path

__version__ = "0.1.0"

# The pipeline stages live in top-level folders of the repository (schemas/, gpu/, service/,
# loadgen/) and install as dcsm.schemas, dcsm.gpu, ... . When this package is imported
# straight from a source checkout (e.g. `python -m dcsm.cli` in the repo root), let those
# folders resolve as sub-packages too.
_checkout = _Path(__file__).resolve().parent.parent
if (_checkout / "gpu" / "dcsm_kernel.cu").is_file() and str(_checkout) not in __path__:
    __path__.append(str(_checkout))
