"""argparse types for the command lines' numbers: a bad value stops the command with
argparse's one-line usage error naming the option, before anything starts."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def whole(least: int) -> Callable[[str], int]:
    """A whole number >= ``least``."""

    def parse(text: str) -> int:
        try:
            k = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if k < least:
            raise argparse.ArgumentTypeError(f"must be >= {least}, got {k}")
        return k

    return parse


def number(above: float = -math.inf, *, or_equal: bool = False) -> Callable[[str], float]:
    """A finite number greater than ``above`` (or equal to it, with ``or_equal``)."""

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(x) or not (x >= above if or_equal else x > above):
            bound = "" if above == -math.inf else f" {'>=' if or_equal else '>'} {above:g}"
            raise argparse.ArgumentTypeError(f"must be a finite number{bound}, got {text}")
        return x

    return parse


positive_int = whole(1)
seed = whole(0)  # numpy's generators take no negative seed


def path(text: str) -> str:
    """A file or folder path: not empty (an empty one meant the current folder, or an
    error that named no path)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return text
