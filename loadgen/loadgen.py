"""placeholder"""

from __future__ import annotations

import argparse


def add_loadgen_args(p: argparse.ArgumentParser) -> None:
    pass


def run_loadgen(args: argparse.Namespace) -> int:
    return 0
