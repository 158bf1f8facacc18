"""The four-way search step the GPU kernels share (gpu/search_steps.cuh), compiled for the
host with the system's C++ compiler (no GPU): a lower and an upper bound searched with it,
as mvg_read.cuh's lower_nbr and static_match.cu's lower_bound do, equal std::lower_bound and
std::upper_bound on sorted runs with duplicates, never read outside the range searched, and
take at most 8 dependent steps for 27K entries (15 binary)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from dcsm.gpu import loader

HEADER = Path(loader.__file__).with_name("search_steps.cuh")

HARNESS = r"""
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>
#define __device__
#define __forceinline__
#include "HEADER"

static int steps, reads;
static const std::vector<int>* run;
static int at(int k) {
    if (k < 0 || k >= (int)run->size()) {
        std::printf("read outside the run: %d\n", k);
        std::exit(1);
    }
    ++reads;
    return (*run)[k];
}
// As lower_nbr: three pivots a step while four or more entries are left, then binary.
static int search(int c, bool upper) {
    int lo = 0, hi = (int)run->size();
    auto below = [&](int v) { return v < c || (upper && v == c); };
    while (hi - lo >= 4) {
        const Split4 p = split4(lo, hi);
        if (!(lo < p.m1 && p.m1 < p.m2 && p.m2 < p.m3 && p.m3 < hi)) {
            std::printf("pivots outside (lo, hi)\n");
            std::exit(1);
        }
        narrow4(p, below(at(p.m1)) + below(at(p.m2)) + below(at(p.m3)), lo, hi);
        ++steps;
    }
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (below(at(mid))) lo = mid + 1; else hi = mid;
        ++steps;
    }
    return lo;
}
int main() {
    std::mt19937 rng(7);
    long cases = 0;
    for (int n = 0; n < 400; ++n)
        for (int rep = 0; rep < 8; ++rep) {
            std::vector<int> v(n);
            const int span = 1 + n / (1 + rep % 4);
            for (int& x : v) x = (int)(rng() % span);
            std::sort(v.begin(), v.end());
            run = &v;
            for (int c = -1; c <= span + 1; ++c)
                for (int upper = 0; upper < 2; ++upper) {
                    const auto ref = upper ? std::upper_bound(v.begin(), v.end(), c)
                                           : std::lower_bound(v.begin(), v.end(), c);
                    if (search(c, upper) != ref - v.begin()) {
                        std::printf("n %d c %d upper %d\n", n, c, upper);
                        return 1;
                    }
                    ++cases;
                }
        }
    std::vector<int> big(27000);
    for (int k = 0; k < 27000; ++k) big[k] = 2 * k;
    run = &big;
    int most = 0;
    for (int c = -1; c < 54002; c += 7) {
        steps = 0;
        search(c, false);
        most = std::max(most, steps);
    }
    std::printf("%ld %d\n", cases, most);
    return 0;
}
"""


def test_four_way_steps_find_the_bounds(tmp_path: Path) -> None:
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler on PATH (c++, g++ or clang++) to build the host harness")
    src = tmp_path / "harness.cpp"
    src.write_text(HARNESS.replace("HEADER", str(HEADER)))
    exe = tmp_path / "harness"
    subprocess.run([cxx, "-std=c++17", "-O1", "-o", str(exe), str(src)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    cases, most = map(int, out.stdout.split())
    assert cases > 100_000
    assert most <= 8  # dependent steps (pivots, then binary ones) for 27K entries; 15 binary
