// executor.cuh -- executor warps: take a ticket, wait for the item, enumerate its matches
// (donating the untouched rest of a large level to waiting warps), write them to the out
// ring, finish updates. Buffers: items/item_stamp/item_free (read; donations write),
// upd (pending, done), upd_count (atomicAdd), out ring (body, then stamp), done and
// done_counts (the finishing warp); reads the graph through mvg_read.cuh.

// ---------------------------------------------------------------------------------------
// Executor

struct Level {
    Adj a;            // the list scanned at this level: positions [0, a.len)
    int pos, end;     // current window start, end of the scan
    unsigned mask;    // candidates of the current window not yet taken
    int best;         // which backward neighbour's list is scanned
    int paired;       // counting: pos of the window whose short last levels are counted
};

// Evaluate the window starting at lv.pos of level i: bit l set when entry pos+l is a valid
// candidate for step i.
__device__ unsigned eval_window(const Ctx& C, const int* pl, int i, const Level& lv, const int* m,
                                const Adj* madj, int tau, int lane) {
    int t = lv.pos + lane;
    bool ok = t < lv.end;
    int c = -1;
    if (ok) {
        Entry e = load_entry(C.entries + adj_at(lv.a, t));
        c = e.nbr;
        int nb = __ldcg(pl + PL_BNCNT + i);
        int want_base = __ldcg(pl + PL_BNELAB + i * KMAX + lv.best);
        ok = e.ct <= tau && tau <= e.dt && (want_base == ANY || e.elab == want_base);
        int vl = __ldcg(pl + PL_VLABEL + i);
        if (ok && vl != ANY && __ldcg(C.vlab + c) != vl) ok = false;
        for (int j = 0; ok && j < i; ++j) if (m[j] == c) ok = false;
        int lt = __ldcg(pl + PL_SYMLT + i), gt = __ldcg(pl + PL_SYMGT + i);
        if (ok && (lt | gt)) {
            i64 ec = __ldcg(C.ext + c);
            for (int j = 0; ok && j < i; ++j) {
                if (((lt >> j) & 1) && !(ec < __ldcg(C.ext + m[j]))) ok = false;
                if (((gt >> j) & 1) && !(ec > __ldcg(C.ext + m[j]))) ok = false;
            }
        }
        for (int k = 0; ok && k < nb; ++k) {
            if (k == lv.best) continue;
            int j = __ldcg(pl + PL_BNPOS + i * KMAX + k);
            ok = has_edge(C, madj[j], c, tau, __ldcg(pl + PL_BNELAB + i * KMAX + k));
        }
    }
    return __ballot_sync(0xffffffffu, ok);
}

// Counting only: the last level of every candidate in `mask` (level n-2's window at lv.pos)
// whose scan has at most PAIRS_MAX_LIST entries, all at once; returns their matches and
// leaves in *longs the candidates with longer scans, for run_item to walk one at a time (their
// windows are full, and they can be donated). Walking each candidate alone gives its last
// level windows of its own, mostly idle lanes when lists are short. Lane l takes candidate
// l: its own m, madj[n-2] (nothing reads that step again before run_item sets it) and
// its last level's scan (pick_base); the warp walks the concatenation of the short scans 32
// entries a round, entry g going to lane g % 32, which finds the candidate owning it by a
// binary search over the lanes' prefix sums and makes eval_window's checks against that
// owner's m[n-2]. gpu/static_match.cu's count_last_pairs is the static twin.
__device__ u64 count_last_pairs(const Ctx& C, const int* pl, int n, const Level& lv, int* m,
                                Adj* madj, int tau, unsigned mask, unsigned* longs, int lane) {
    const int i = n - 2, L = n - 1;
    int len = 0, cand = -1, best = 0;
    Adj b = {0, 0, 0, 0};  // this lane's candidate's last-level scan
    if ((mask >> lane) & 1) {
        cand = __ldcg(&C.entries[adj_at(lv.a, lv.pos + lane)].nbr);
        m[i] = cand;
        find_version(C, cand, tau, madj[i]);
        best = pick_base(pl, L, madj);
        b = madj[__ldcg(pl + PL_BNPOS + L * KMAX + best)];
        len = b.len;
    }
    *longs = __ballot_sync(0xffffffffu, len > PAIRS_MAX_LIST);
    if (len > PAIRS_MAX_LIST) len = 0;
    const int incl = warp_inclusive_sum(len, lane);  // at most 32 * PAIRS_MAX_LIST
    const int total = __shfl_sync(0xffffffffu, incl, 31), excl = incl - len;
    const Adj ca = madj[i];
    const int nb = __ldcg(pl + PL_BNCNT + L), vl = __ldcg(pl + PL_VLABEL + L);
    const int lt = __ldcg(pl + PL_SYMLT + L), gt = __ldcg(pl + PL_SYMGT + L);
    u64 found = 0;
    for (int g0 = 0; g0 < total; g0 += 32) {
        const int g = g0 + lane;
        const int o = owning_lane(incl, g);
        const int oc = __shfl_sync(0xffffffffu, cand, o);
        const int ob = __shfl_sync(0xffffffffu, best, o);
        const Adj ob_a = shfl_adj(b, o);
        const i64 at = adj_at(ob_a, g - __shfl_sync(0xffffffffu, excl, o));
        const Adj oa = shfl_adj(ca, o);
        bool ok = g < total;
        if (ok) {
            Entry e = load_entry(C.entries + at);
            const int c = e.nbr;
            const int want_base = __ldcg(pl + PL_BNELAB + L * KMAX + ob);
            ok = e.ct <= tau && tau <= e.dt && (want_base == ANY || e.elab == want_base) && c != oc;
            if (ok && vl != ANY && __ldcg(C.vlab + c) != vl) ok = false;
            for (int j = 0; ok && j < i; ++j) if (m[j] == c) ok = false;
            if (ok && (lt | gt)) {
                i64 ec = __ldcg(C.ext + c);
                for (int j = 0; ok && j < L; ++j) {
                    if (!(((lt | gt) >> j) & 1)) continue;
                    i64 ej = __ldcg(C.ext + (j == i ? oc : m[j]));
                    if (((lt >> j) & 1) && !(ec < ej)) ok = false;
                    if (((gt >> j) & 1) && !(ec > ej)) ok = false;
                }
            }
            for (int k = 0; ok && k < nb; ++k) {
                if (k == ob) continue;
                const int j = __ldcg(pl + PL_BNPOS + L * KMAX + k);
                const int want = __ldcg(pl + PL_BNELAB + L * KMAX + k);
                ok = has_edge(C, j == i ? oa : madj[j], c, tau, want);
            }
        }
        found += __popc(__ballot_sync(0xffffffffu, ok));
    }
    return found;
}

// Write one match per set bit of `mask` (the candidates of the last level) to the ring.
__device__ void emit_window(const Ctx& C, const int* pl, int n, int slot, int tau, const Level& lv,
                            int* m, unsigned mask, int lane) {
    int cnt = __popc(mask);
    int rec = 3 + n;
    u64 base = 0;
    if (lane == 0) base = reserve_out(C, (u64)(cnt * rec));
    base = __shfl_sync(0xffffffffu, base, 0);
    if ((mask >> lane) & 1) {
        u64 at = base + (u64)__popc(mask & lanemask_lt()) * rec;
        int c = __ldcg(&C.entries[adj_at(lv.a, lv.pos + lane)].nbr);
        m[n - 1] = c;
        C.out[(at + 1) % C.out_cap] = tau;
        C.out[(at + 2) % C.out_cap] = slot;
        for (int x = 0; x < n; ++x) C.out[(at + 3 + x) % C.out_cap] = m[__ldcg(pl + PL_POS + x)];
        __threadfence_system();
        vstore(&C.out[at % C.out_cap], out_stamp(at));
    }
    warp_join();
}

// Reserve an item slot (lane 0): wait until its previous occupant has been read.
__device__ __forceinline__ u64 reserve_item_slot(const Ctx& C, u64 idx) {
    while (vload(&C.item_free[idx % MAXI]) < (i64)idx) __nanosleep(200);
    return idx;
}

// Write the words of item `it` into slot idx; it runs once stamped (stamp_item, after a fence).
__device__ __forceinline__ void write_item_body(const Ctx& C, u64 idx, const Item& it) {
    Item* dst = C.items + idx % MAXI;
    const int4* s = reinterpret_cast<const int4*>(&it);
    int4* d = reinterpret_cast<int4*>(dst);
#pragma unroll
    for (int k = 0; k < ITEM_INTS / 4; ++k) d[k] = s[k];
}

__device__ __forceinline__ void stamp_item(const Ctx& C, u64 idx) {
    vstore(&C.item_stamp[idx % MAXI], (i64)idx);
}

// Write item `it` and stamp it (one lane).
__device__ __forceinline__ void write_item(const Ctx& C, u64 idx, const Item& it) {
    write_item_body(C, idx, it);
    __threadfence();
    stamp_item(C, idx);
}

// Hand positions [pos, end) of level j (with prefix m[0..j-1]) to another warp.
__device__ void donate(const Ctx& C, int tau, int slot_plan, int j, int pos, int end, const int* m,
                       int lane) {
    if (lane == 0) {
        atomicAdd(&C.upd[tau % MAXU].pending, 1);  // before the item can run and finish
        __threadfence();
        u64 idx = reserve_item_slot(C, atomicAdd(&C.st->item_reserve, 1ULL));
        Item it;
        it.tau = tau; it.slot_plan = slot_plan; it.level = j; it.pos = pos; it.end = end; it.pad = 0;
        for (int k = 0; k < KMAX - 2; ++k) it.pre[k] = k + 2 < j ? m[k + 2] : -1;
        write_item(C, idx, it);
        atomicAdd(&C.st->donated, 1ULL);
    }
    warp_join();
}

// Enumerate the matches of one work item; returns the number found.
__device__ __noinline__ u64 run_item(const Ctx& C, const Item& it, volatile BlockView& V, int lane) {
    int tau = it.tau;
    int slot = it.slot_plan >> 16, p = it.slot_plan & 0xffff;
    const Upd* u = C.upd + (tau % MAXU);
    const int* pl = plan_ptr(C, slot, p);
    int n = __ldcg(pl + PL_N);
    bool emit = vload(&C.st->q_count[slot]) == 0;
    int m[KMAX];
    Adj madj[KMAX];
    m[0] = __ldcg(&u->a); m[1] = __ldcg(&u->b);
    int s = it.level;
    for (int j = 2; j < s; ++j) m[j] = it.pre[j - 2];
    for (int j = 0; j < s; ++j) find_version(C, m[j], tau, madj[j]);
    if (flip_ends(pl, madj[0].len, madj[1].len)) {
        const int t = m[0]; m[0] = m[1]; m[1] = t;
        const Adj x = madj[0]; madj[0] = madj[1]; madj[1] = x;
    }
    if (n == 2) {
        if (emit) {
            // A two-vertex pattern: the match is the edge itself.
            if (lane == 0) {
                u64 base = reserve_out(C, 5);
                C.out[(base + 1) % C.out_cap] = tau;
                C.out[(base + 2) % C.out_cap] = slot;
                C.out[(base + 3 + __ldcg(pl + PL_POS + 0)) % C.out_cap] = m[0];
                C.out[(base + 3 + __ldcg(pl + PL_POS + 1)) % C.out_cap] = m[1];
                __threadfence_system();
                vstore(&C.out[base % C.out_cap], out_stamp(base));
            }
            warp_join();
        }
        return 1;
    }
    Level L[KMAX];
    u64 total = 0;
    int i = s;
    {
        Level& lv = L[s];
        lv.best = pick_base(pl, s, madj);
        lv.a = madj[__ldcg(pl + PL_BNPOS + s * KMAX + lv.best)];
        lv.pos = it.pos;
        lv.end = it.end < 0 ? min(lv.a.len, it.pos + CHUNK) : min(lv.a.len, it.end);
        lv.mask = lv.pos < lv.end ? eval_window(C, pl, s, lv, m, madj, tau, lane) : 0u;
        lv.paired = -1;
    }
    int steps = 0;
    while (i >= s) {
        Level& lv = L[i];
        if (lv.mask == 0) {
            lv.pos += 32;
            if (lv.pos >= lv.end) { --i; continue; }
            if (++steps % DONATE_EVERY == 0) {
                // Give the untouched rest of the shallowest level with some left to a
                // waiting warp.
                int hungry = 0;
                if (lane == 0) { refresh_view(C, V); hungry = V.hungry; }
                if (__shfl_sync(0xffffffffu, hungry, 0)) {
                    for (int j = s; j <= i; ++j) {
                        int from = L[j].pos + 32;  // windows not yet evaluated
                        if (L[j].end - from >= (j == n - 1 ? 64 : 1)) {
                            donate(C, tau, it.slot_plan, j, from, L[j].end, m, lane);
                            L[j].end = from;
                            break;
                        }
                    }
                }
            }
            lv.mask = eval_window(C, pl, i, lv, m, madj, tau, lane);
            continue;
        }
        if (!emit && i == n - 2 && lv.paired != lv.pos && PAIRS_MAX_LIST > 0 &&
            (lv.mask & (lv.mask - 1u))) {  // two candidates or more
            // The window's candidates with short last levels at once; the rest below.
            unsigned longs;
            total += count_last_pairs(C, pl, n, lv, m, madj, tau, lv.mask, &longs, lane);
            lv.paired = lv.pos;
            lv.mask = longs;
            continue;
        }
        if (i == n - 1) {
            total += __popc(lv.mask);
            if (emit) emit_window(C, pl, n, slot, tau, lv, m, lv.mask, lane);
            lv.mask = 0;
            continue;
        }
        int j = __ffs(lv.mask) - 1;
        lv.mask &= lv.mask - 1;
        m[i] = __ldcg(&C.entries[adj_at(lv.a, lv.pos + j)].nbr);
        find_version(C, m[i], tau, madj[i]);
        ++i;
        // Scan the shortest backward-neighbour list of the new level.
        Level& nx = L[i];
        nx.best = pick_base(pl, i, madj);
        nx.a = madj[__ldcg(pl + PL_BNPOS + i * KMAX + nx.best)];
        nx.pos = 0; nx.end = nx.a.len;
        nx.mask = nx.end > 0 ? eval_window(C, pl, i, nx, m, madj, tau, lane) : 0u;
        nx.paired = -1;
    }
    if (CHECK && lane == 0) {
        // The versions the item started from must still be the ones tau reads.
        for (int j = 0; j < s; ++j) {
            Adj now;
            find_version(C, m[j], tau, now);
            if (!same_adj(now, madj[j])) check_fail(C, CHK_MOVED, tau, m[j], j);
        }
    }
    return total;
}

__device__ void executor(const Ctx& C, volatile BlockView& V, int lane) {
    while (true) {
        u64 idx = 0;
        if (lane == 0) idx = atomicAdd(&C.st->item_ticket, 1ULL);
        idx = __shfl_sync(0xffffffffu, idx, 0);
        // Wait for this ticket's item (its own stamp: device memory only, rule 1), helping
        // with the updater's job meanwhile.
        unsigned ns = 64;
        while (true) {
            int what = 0;  // 1: item ready, 2: stop, 3: help
            if (lane == 0) {
                if (vload(&C.item_stamp[idx % MAXI]) == (i64)idx) what = 1;
                else {
                    refresh_view(C, V);
                    what = V.stop ? 2 : V.job_active ? 3 : 0;
                }
            }
            what = __shfl_sync(0xffffffffu, what, 0);
            if (what == 1) { __threadfence(); break; }  // every lane acquires the item
            if (what == 2) return;
            if (what == 3) {
                help(C, lane, false);
                if (lane == 0) V.job_active = 0;
                ns = 64;
                continue;
            }
            __nanosleep(ns);
            // Poll often only while this ticket's item is about to be written.
            const unsigned cap = idx < V.reserve + NEAR_ITEMS ? WAIT_NS_NEAR : WAIT_NS_MAX;
            ns = ns < cap ? ns << 1 : cap;
        }
        Item it;
        {
            const int4* src = reinterpret_cast<const int4*>(C.items + (idx % MAXI));
            int4* dst = reinterpret_cast<int4*>(&it);
#pragma unroll
            for (int k = 0; k < ITEM_INTS / 4; ++k) dst[k] = __ldcg(src + k);
        }
        warp_join();
        if (lane == 0) vstore(&C.item_free[idx % MAXI], (i64)(idx + MAXI));
        int tau = it.tau;
        Upd* u = C.upd + (tau % MAXU);
        if (lane == 0 && __ldcg((const unsigned long long*)&u->t_start) == 0ULL)
            atomicCAS((unsigned long long*)&u->t_start, 0ULL, (unsigned long long)gtime());
        u64 found = run_item(C, it, V, lane);
        if (lane == 0 && found) {
            int slot = it.slot_plan >> 16, p = it.slot_plan & 0xffff;
            u64 weight = (u64)__ldcg(plan_ptr(C, slot, p) + PL_WEIGHT);
            atomicAdd(&C.upd_count[(size_t)(tau % MAXU) * QMAX + slot], found * weight);
        }
        __threadfence_system();
        warp_join();  // no lane still reads the update's versions once it may complete
        int last = 0;
        if (lane == 0) last = atomicSub(&u->pending, 1) == 1;
        last = __shfl_sync(0xffffffffu, last, 0);
        if (last) {
            __threadfence();
            finalize_update(C, tau, lane);
        }
    }
}

// Completion of update tau: counts and times to the host, then the stamp; then the device
// flag the collector and slot reuse wait for.
__device__ void finalize_update(const Ctx& C, int tau, int lane) {
    size_t slot = tau % MAXU;
    Upd* u = C.upd + slot;
    const u64 c = lane < QMAX ? __ldcg(C.upd_count + slot * QMAX + lane) : 0;
    const unsigned nonzero = __ballot_sync(0xffffffffu, c != 0);
    if (c) C.done_counts[(size_t)lane * MAXU + slot] = c;  // the non-zero ones only
    warp_join();  // every lane's count before lane 0's fence and stamp (the fence is cumulative)
    if (lane == 0) {
        Done* d = C.done + slot;
        d->outcome = __ldcg(&u->outcome);
        d->nonzero = nonzero;
        d->t_taken = __ldcg((const unsigned long long*)&u->t_taken);
        u64 ts = __ldcg((const unsigned long long*)&u->t_start);
        d->t_finish = gtime();
        d->t_start = ts ? ts : d->t_finish;
        __threadfence_system();
        vstore(&d->tau, (i64)tau);
        vstore(&u->done, (i64)tau);
        atomicAdd(&C.st->completed, 1ULL);
    }
    warp_join();
}

// Completion of an update with no work item (one thread): times, stamp. Its counts are all
// zero (Done.nonzero = 0).
__device__ void finalize_empty(const Ctx& C, int tau) {
    size_t slot = tau % MAXU;
    Done* d = C.done + slot;
    d->outcome = __ldcg(&C.upd[slot].outcome);
    d->nonzero = 0;
    d->t_taken = __ldcg((const unsigned long long*)&C.upd[slot].t_taken);
    d->t_start = d->t_finish = gtime();
    __threadfence_system();
    vstore(&d->tau, (i64)tau);
    vstore(&C.upd[slot].done, (i64)tau);
    atomicAdd(&C.st->completed, 1ULL);
}
