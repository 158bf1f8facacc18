"""``dcsm loadgen``'s numeric options are checked when parsed: a bad value stops it with
argparse's usage error naming the option, before a broker or a service is started."""

from __future__ import annotations

import argparse

import pytest

from dcsm.loadgen.loadgen import add_loadgen_args


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="loadgen", exit_on_error=False)
    add_loadgen_args(p)
    return p.parse_args(argv)


def test_defaults_and_good_values_parse() -> None:
    args = parse()
    assert args.rates == [1000.0, 2000.0, 5000.0] and args.linger_ms == 5.0
    args = parse("--rates", "500, 2e4", "--linger-ms", "0", "--duration", "0.5", "--vertices", "9")
    assert args.rates == [500.0, 20000.0] and args.linger_ms == 0.0
    assert args.duration == 0.5 and args.vertices == 9


@pytest.mark.parametrize(
    "option,value",
    [("--rates", "0"), ("--rates", "1000,-5"), ("--rates", ","), ("--rates", "fast"),
     ("--duration", "0"), ("--duration", "nan"), ("--linger-ms", "-1"), ("--linger-ms", "inf"),
     ("--slo-ms", "0"), ("--drain-s", "-2"), ("--vertices", "2"), ("--vertices", "2.5"),
     ("--seed", "-1")],
)  # fmt: skip
def test_bad_values_are_refused_naming_the_option(option: str, value: str) -> None:
    with pytest.raises(argparse.ArgumentError, match=option.lstrip("-").replace("-", ".")):
        parse(option, value)
