"""``python -m dcsm.service serve|demo|loadgen``: the service commands without the main CLI."""

from __future__ import annotations

import argparse
import sys

from .cli import add_commands


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dcsm.service")
    add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
