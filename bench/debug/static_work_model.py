"""A CPU model of the GPU static count kernel's schedule (gpu/static_match.cu, count mode):
is a row bound by load imbalance between warps?

    python bench/debug/static_work_model.py GRAPH QUERY_FILE   # or shape:NAME (static_bench)

It walks plan 0 of the pattern (the device plan: degree order, symmetry, no tail product)
from every start edge of the degree-ordered CSR exactly as the kernel does and charges each
start its work: per level opened, its two range searches plus, per 32-entry window, one step
and log2 of every other backward neighbour's list (the binary searches, dependent loads).
It checks the count against the found matches times the weight, then replays the kernel's
guided claims (a quarter of what is left per warp, 1..CLAIM_MAX) over 2,112 warps (264
blocks of 8, an H200) and prints the makespan against the ideal (total / warps), for starts
as the unit and for level-2 windows as the unit (static_units). Slow (numba, one core):
about a minute for enron's 5-cycle.
"""

import sys

import numba as nb
import numpy as np

from dcsm.gpu import static_match as sm
from dcsm.graphio import read_csm_query, read_graph


def csr(g):
    ids = g.vertex_ids
    order = np.argsort(ids)
    a = order[np.searchsorted(ids, g.src, sorter=order)]
    b = order[np.searchsorted(ids, g.dst, sorter=order)]
    nv = len(ids)
    deg = np.bincount(np.concatenate([a, b]), minlength=nv)
    vo = np.lexsort((np.arange(nv), deg, g.vertex_labels))
    rank = np.empty(nv, np.int64)
    rank[vo] = np.arange(nv)
    ra, rb = rank[a], rank[b]
    src = np.concatenate([ra, rb])
    dst = np.concatenate([rb, ra])
    o = np.lexsort((dst, src))
    src, dst = src[o], dst[o]
    off = np.zeros(nv + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=nv), out=off[1:])
    return off, dst.astype(np.int32), src.astype(np.int32)


K = sm.K


@nb.njit(cache=False)
def lb(nbr, o, ln, c):
    lo, hi = 0, ln
    while lo < hi:
        mid = (lo + hi) >> 1
        if nbr[o + mid] < c:
            lo = mid + 1
        else:
            hi = mid
    return lo


@nb.njit
def run(
    off,
    nbr,
    row,
    P,
    out_work,
    out_cnt,
    uw,
    ucount,
    K,
    SP_BNCNT,
    SP_BNPOS,
    SP_SYMLT,
    SP_SYMGT,
    SP_TAIL,
):
    n = P[0]
    E2 = nbr.shape[0]
    m = np.zeros(K, np.int64)
    for t in range(E2):
        a = row[t]
        b = nbr[t]
        lt1 = P[SP_SYMLT + 1]
        gt1 = P[SP_SYMGT + 1]
        if (lt1 & 1) and not (b < a):
            continue
        if (gt1 & 1) and not (b > a):
            continue
        m[0] = a
        m[1] = b
        work = 0.0
        cnt = 0
        # recursive DFS with explicit stack: per level, candidate list positions
        i = 2
        def_open = True
        # iterative: for each level keep the list of candidates (computed exactly)
        cands = [np.zeros(0, np.int64) for _ in range(K)]
        ci = np.zeros(K, np.int64)
        while True:
            if def_open:
                nbc = P[SP_BNCNT + i]
                best = 0
                bl = 1 << 40
                for k in range(nbc):
                    j = P[SP_BNPOS + i * K + k]
                    ln = off[m[j] + 1] - off[m[j]]
                    if ln < bl:
                        bl = ln
                        best = k
                jb = P[SP_BNPOS + i * K + best]
                above = -1
                below = 1 << 40
                lt = P[SP_SYMLT + i]
                gt = P[SP_SYMGT + i]
                for j in range(i):
                    if (gt >> j) & 1:
                        above = max(above, m[j])
                    if (lt >> j) & 1:
                        below = min(below, m[j])
                o = off[m[jb]]
                L = off[m[jb] + 1] - o
                s = 0 if above < 0 else lb(nbr, o, L, above + 1)
                e = L if below >= (1 << 40) else lb(nbr, o, L, below)
                if e < s:
                    e = s
                nwin = (e - s + 31) // 32
                # cost: windows x (1 + binary searches of the other backward neighbours)
                ls = 0.0
                for k in range(nbc):
                    if k == best:
                        continue
                    j = P[SP_BNPOS + i * K + k]
                    ls += np.log2(off[m[j] + 1] - off[m[j]] + 1.0)
                work += 2 + np.log2(L + 1.0) + nwin * (1 + ls)
                cs = []
                for q in range(o + s, o + e):
                    c = nbr[q]
                    ok = True
                    for j in range(i):
                        if m[j] == c:
                            ok = False
                    for k in range(nbc):
                        if not ok:
                            break
                        if k == best:
                            continue
                        j = P[SP_BNPOS + i * K + k]
                        oo = off[m[j]]
                        LL = off[m[j] + 1] - oo
                        p = lb(nbr, oo, LL, c)
                        ok = p < LL and nbr[oo + p] == c
                    if ok:
                        cs.append(c)
                if i == n - 1:
                    cnt += len(cs)
                    i -= 1
                    def_open = False
                    if i < 2:
                        break
                    continue
                cands[i] = np.array(cs, np.int64) if len(cs) else np.zeros(0, np.int64)
                ci[i] = 0
                def_open = False
            if ci[i] < cands[i].shape[0]:
                if i == 2 and ci[i] % 32 == 0:
                    uw[ucount[0]] = work
                    ucount[0] += 1
                m[i] = cands[i][ci[i]]
                ci[i] += 1
                work += 1
                i += 1
                def_open = True
            else:
                i -= 1
                if i < 2:
                    break
        out_work[t] = work
        out_cnt[t] = cnt
        uw[ucount[0]] = -work
        ucount[0] += 1


def makespan(work, W, claim_max=32):
    import heapq

    n = len(work)
    h = [(0.0, w) for w in range(W)]
    pos = 0
    cum = np.concatenate([[0], np.cumsum(work)])
    while pos < n:
        tm, w = heapq.heappop(h)
        take = max(1, min(claim_max, (n - pos) // (4 * W)))
        e = min(n, pos + take)
        heapq.heappush(h, (tm + cum[e] - cum[pos] + 0.5, w))
        pos = e
    return max(t for t, _ in h)


if __name__ == "__main__":
    g = read_graph(sys.argv[1])
    if sys.argv[2].startswith("shape:"):
        sys.path.insert(0, "bench")
        import static_bench

        pat = static_bench.shape(sys.argv[2][6:])
    else:
        pat = read_csm_query(sys.argv[2])
    off, nbr, row = csr(g)
    dp = sm.device_plan(pat, count=True)
    P = dp.blob.copy().astype(np.int64)
    P[sm.SP_TAIL] = P[0]
    uw = np.zeros(len(nbr) * 40)
    ucount = np.zeros(1, np.int64)
    work = np.zeros(len(nbr))
    cnt = np.zeros(len(nbr), np.int64)

    run(
        off,
        nbr,
        row,
        P,
        work,
        cnt,
        uw,
        ucount,
        K,
        sm.SP_BNCNT,
        sm.SP_BNPOS,
        sm.SP_SYMLT,
        sm.SP_SYMGT,
        sm.SP_TAIL,
    )
    print("found", cnt.sum(), "x weight", dp.weight, "=", cnt.sum() * dp.weight)
    tot = work.sum()
    W = 2112
    top = work.max()
    print(f"total work {tot:.3g}, ideal {tot / W:.3g}, max start {top:.3g} ({top / tot:.2%})")
    print("makespan edge order", makespan(work, W) / (tot / W))
    srt = np.sort(work)[::-1]
    print("top starts share", [round(srt[:k].sum() / tot * 100, 2) for k in (1, 10, 100, 1000)])
    u = uw[: ucount[0]]
    # units: differences between consecutive marks within a start (the first: its opening)
    units = []
    prev = 0.0
    for x in u:
        if x >= 0:
            units.append(x - prev)
            prev = x
        else:
            units.append(-x - prev)
            prev = 0.0
    units = np.array(units)
    units = units[units > 0]
    print("units", len(units), "sum", units.sum(), "max", units.max())
    for cm in (1, 4, 32):
        print("UNITS claim_max", cm, round(makespan(units, W, cm) / (units.sum() / W), 3))
    for cm in (1, 4, 8, 32):
        print("claim_max", cm, round(makespan(work, W, cm) / (tot / W), 3))
    rng = np.random.default_rng(0)
    print("random perm", round(makespan(work[rng.permutation(len(work))], W) / (tot / W), 3))
