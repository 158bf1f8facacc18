"""dcsm: continuous subgraph matching as a streaming service (GPU DCSM design, CPU oracle)."""

__version__ = "0.1.0"
