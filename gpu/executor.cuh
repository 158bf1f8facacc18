// executor.cuh -- executor warps: take a ticket, wait for the item, enumerate its matches
// (donating the untouched rest of a large level to waiting warps), write them to the out
// ring, finish updates. Buffers: items/item_stamp/item_free (read; donations write),
// upd (pending, done), upd_count (atomicAdd), out ring (body, then stamp), done and
// done_counts (the finishing warp), hub_bits/hub_state/hub_key (the hub bitmaps in the
// slab pool's top: the items that share one set, test and clear it); reads the graph
// through mvg_read.cuh.

// ---------------------------------------------------------------------------------------
// Executor

struct Level {
    Adj a;            // the list scanned at this level: positions [0, a.len)
    int pos, end;     // current window start, end of the scan
    unsigned mask;    // candidates of the current window not yet taken
    int best;         // which backward neighbour's list is scanned
    int paired;       // counting: pos of the window whose short last levels are counted
    int other;        // counting, last level: the step whose list it is merged with (-1: none)
};

// Where merge_window goes on in the other list: entry k[r] of its run r (0 base, 1 tail) is
// at or below the first entry of that run the next window can need, and v[r] is its
// neighbour (INT_MAX past the run's end): a window whose last neighbour is below v[r] needs
// nothing of run r. Valid while the windows stay in run `arun` of the scanned list (-1:
// none yet; search first).
struct MergeCursor { int k[2], v[2]; int arun; };

// An item's hub bitmap, hb: -1 none, else 32 x its slot + the step whose list it holds.
// Slot k is Ctx.hub_words words at hub_bits + k * hub_words, one bit for each of the first
// 32 * hub_words vertices (the host sizes them by the graph; a neighbour past them is
// searched for as without a bitmap), all zero while the slot is free.
//
// Slot k's state word hub_state[k]: a generation (bits 63-32, one more at each claim),
// HUB_KEYED once hub_key[2k..2k+1] names its list (tau; vertex << 32 | wanted label),
// HUB_READY once its bits are set, HUB_ZEROING while the last item to leave clears it, and
// how many items use it (bits 28-0). Free: the low 32 bits 0. An item joins a slot whose
// key is its own while it is keyed (a CAS on the word it read: the generation, and with it
// the key, unchanged), and waits for HUB_READY; the last to leave clears the bits and
// frees the slot, so every bitmap is all zero whenever its slot is free.
#define HUB_READY (1ULL << 31)
#define HUB_KEYED (1ULL << 30)
#define HUB_ZEROING (1ULL << 29)
#define HUB_USERS ((1ULL << 29) - 1)
#define HUB_GEN (~0ULL << 32)
__device__ __forceinline__ int hub_step(int hb) { return hb < 0 ? -1 : hb & 31; }
__device__ __forceinline__ unsigned* hub_words_of(const Ctx& C, int hb) {
    return C.hub_bits + (size_t)(hb >> 5) * C.hub_words;
}

// Counting, at the last step i = n - 1 of a plan whose scanned list is lv.a: the step whose
// list is merged with it (merge_window), or -1 to test each candidate by binary searches
// (eval_window). Two lists exactly, the scanned one long and the other (the longer, by
// pick_base) at most MERGE_RATIO times as long (MERGE_LAST, MERGE_MIN), and not the list
// the item tests by bits (hb, hub_bits_for).
__device__ __forceinline__ int merge_other(const int* pl, int n, int i, const Level& lv,
                                           const Adj* madj, bool emit, int hb) {
    if (!MERGE_LAST || emit || i != n - 1 || __ldcg(pl + PL_BNCNT + i) != 2) return -1;
    const int j = __ldcg(pl + PL_BNPOS + i * KMAX + (1 - lv.best));
    if (j == hub_step(hb)) return -1;
    return lv.a.len >= MERGE_MIN && (i64)madj[j].len <= (i64)MERGE_RATIO * lv.a.len ? j : -1;
}

// Set the bits of list a's neighbours alive at tau with label `want` in bitmap w (all zero
// before), or (set false) zero every word a's neighbours fall in, alive or not. The whole
// warp; its lanes' later bit tests read the words through L2 (__ldcg) after warp_join.
__device__ void hub_bits_walk(const Ctx& C, unsigned* w, const Adj& a, int tau, int want, bool set,
                              int lane) {
    for (int p0 = 0; p0 < a.len; p0 += 128) {
        Entry e[4];  // four rounds' loads in flight at once
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int p = p0 + 32 * r + lane;
            e[r] = p < a.len ? load_entry(C.entries + adj_at(a, p)) : Entry{-1, 0, 0, 0};
        }
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int c = e[r].nbr;
            if (c < 0 || (u64)(c >> 5) >= C.hub_words) continue;
            if (!set) w[c >> 5] = 0u;
            else if (e[r].ct <= tau && tau <= e[r].dt && (want == ANY || e[r].elab == want))
                atomicOr(w + (c >> 5), 1u << (c & 31));
        }
    }
    __threadfence_block();
    warp_join();
}

// Lane 0: the slot of the bitmap of (tau, vertex v, label want), joined or claimed within
// HUB_BITS_TRIES slots from the key's hash, else -1; *build: claimed, so this item sets its
// bits (the slot keyed, not ready).
__device__ int hub_slot(const Ctx& C, u64 tau, int v, int want, bool* build) {
    const u64 k1 = (u64)(unsigned)v << 32 | (unsigned)want;
    const u64 h = (tau * 0x9E3779B97F4A7C15ULL) ^ (k1 * 0xC2B2AE3D27D4EB4FULL);
    for (int t = 0; t < HUB_BITS_TRIES; ++t) {
        const int q = (int)(((h >> 32) + t) % C.hub_slots);
        u64* sw = C.hub_state + q;
        const u64 w = __ldcg(sw);
        if ((w & ~HUB_GEN) == 0) {  // free: claim it
            if (atomicCAS(sw, w, (w & HUB_GEN) + (1ULL << 32) + 1) != w) continue;
            C.hub_key[2 * q] = tau;
            C.hub_key[2 * q + 1] = k1;
            __threadfence();  // the key before HUB_KEYED
            atomicOr(sw, HUB_KEYED);
            *build = true;
            return q;
        }
        if (!(w & HUB_KEYED) || (w & HUB_ZEROING)) continue;
        __threadfence();  // the key read after the HUB_KEYED that published it
        if (__ldcg(C.hub_key + 2 * q) != tau || __ldcg(C.hub_key + 2 * q + 1) != k1) continue;
        bool joined = false;
        for (u64 x = w;;) {  // one more user, while the generation (and with it the key) holds
            const u64 was = atomicCAS(sw, x, x + 1);
            if (was == x) { joined = true; break; }
            if ((was ^ w) & HUB_GEN || (was & HUB_ZEROING) || !(was & HUB_USERS)) break;
            x = was;
        }
        if (!joined) continue;
        while (!(__ldcg(sw) & HUB_READY)) __nanosleep(64);
        __threadfence();  // the bits read after the HUB_READY that published them
        *build = false;
        return q;
    }
    return -1;
}

// Counting, an item whose last level n - 1 tests membership in a list fixed for the whole
// item: of that level's two backward neighbours, exactly one matched before the item's
// level s (the 4-cycle's far end, for its level-2 items), with at least HUB_BITS_MIN
// entries, and the item's range (lv, level s) at least 1 / HUB_BITS_DIV as many positions
// (each position's last level tests a list's worth of neighbours: building the bitmap
// must not cost more than the searches it saves). Joins the bitmap of that list at tau,
// or claims a free slot and sets its bits (hub_slot); returns the item's hb, else -1.
__device__ int hub_bits_for(const Ctx& C, const int* pl, int n, int s, const Level& lv, const Adj* madj,
                            const int* m, int tau, bool emit, int lane) {
    const int L = n - 1;
    if (!HUB_BITS_MIN || !C.hub_slots || emit || s >= L || __ldcg(pl + PL_BNCNT + L) != 2)
        return -1;
    const int j0 = __ldcg(pl + PL_BNPOS + L * KMAX), j1 = __ldcg(pl + PL_BNPOS + L * KMAX + 1);
    const int k = j0 < s && j1 >= s ? 0 : j1 < s && j0 >= s ? 1 : -1;
    if (k < 0) return -1;
    const int j = k ? j1 : j0;
    if (madj[j].len < HUB_BITS_MIN || (i64)(lv.end - lv.pos) * HUB_BITS_DIV < madj[j].len) return -1;
    const int want = __ldcg(pl + PL_BNELAB + L * KMAX + k);
    int slot = -1;
    bool build = false;
    if (lane == 0) slot = hub_slot(C, (u64)tau, m[j], want, &build);
    slot = __shfl_sync(0xffffffffu, slot, 0);
    if (slot < 0) return -1;
    const int hb = slot << 5 | j;
    if (__shfl_sync(0xffffffffu, (int)build, 0)) {
        hub_bits_walk(C, hub_words_of(C, hb), madj[j], tau, want, true, lane);
        if (lane == 0) {
            __threadfence();  // the bits before HUB_READY
            atomicOr(C.hub_state + slot, HUB_READY);
            atomicAdd(&C.st->hub_bitmaps, 1ULL);
        }
    }
    warp_join();
    return hb;
}

// Leave the item's bitmap; the last item to leave zeroes it and frees its slot.
__device__ void hub_bits_release(const Ctx& C, int hb, const Adj& a, int lane) {
    u64* sw = C.hub_state + (hb >> 5);
    int last = 0;
    if (lane == 0) {
        u64 w = __ldcg(sw);
        while (true) {
            const bool one = (w & HUB_USERS) == 1;
            const u64 next = one ? (w & HUB_GEN) | HUB_ZEROING : w - 1;
            const u64 was = atomicCAS(sw, w, next);
            if (was == w) { last = one; break; }
            w = was;
        }
    }
    if (__shfl_sync(0xffffffffu, last, 0)) {
        hub_bits_walk(C, hub_words_of(C, hb), a, 0, ANY, false, lane);
        if (lane == 0) {
            __threadfence();  // the zeroing before the release
            atomicExch(sw, __ldcg(sw) & HUB_GEN);
        }
    }
    warp_join();
}

// Is c in step j's list a (with label `want`, alive at tau): a bit test where j is the
// step of the item's bitmap hb (the last level only: callers pass -1 elsewhere), else a
// search.
__device__ __forceinline__ bool in_list(const Ctx& C, int hb, int j, const Adj& a, int c, int tau,
                                        int want) {
    if (j != hub_step(hb) || (u64)(c >> 5) >= C.hub_words)
        return has_edge<EXEC_SEARCH_WAYS>(C, a, c, tau, want);
    const bool bit = (__ldcg(hub_words_of(C, hb) + (c >> 5)) >> (c & 31)) & 1u;
    if (CHECK && bit != has_edge<EXEC_SEARCH_WAYS>(C, a, c, tau, want))
        check_fail(C, CHK_HUB_BITS, tau, c, j);
    return bit;
}

// Is entry e of the list step i scans (that of its backward neighbour `best`) a candidate
// for step i, before the tests in its other backward neighbours' lists: alive at tau with
// the wanted edge label, the wanted vertex label, not matched already, symmetry kept.
__device__ __forceinline__ bool candidate_ok(const Ctx& C, const int* pl, int i, int best,
                                             const Entry& e, const int* m, int tau) {
    const int c = e.nbr;
    const int want_base = __ldcg(pl + PL_BNELAB + i * KMAX + best);
    bool ok = e.ct <= tau && tau <= e.dt && (want_base == ANY || e.elab == want_base);
    const int vl = __ldcg(pl + PL_VLABEL + i);
    if (ok && vl != ANY && __ldcg(C.vlab + c) != vl) ok = false;
    for (int j = 0; ok && j < i; ++j) if (m[j] == c) ok = false;
    const int lt = __ldcg(pl + PL_SYMLT + i), gt = __ldcg(pl + PL_SYMGT + i);
    if (ok && (lt | gt)) {
        const i64 ec = __ldcg(C.ext + c);
        for (int j = 0; ok && j < i; ++j) {
            if (((lt >> j) & 1) && !(ec < __ldcg(C.ext + m[j]))) ok = false;
            if (((gt >> j) & 1) && !(ec > __ldcg(C.ext + m[j]))) ok = false;
        }
    }
    return ok;
}

// Evaluate the window starting at lv.pos of level i: bit l set when entry pos+l is a valid
// candidate for step i. hb: the item's hub bitmap at its last level (hub_bits_for), else -1.
__device__ unsigned eval_window(const Ctx& C, const int* pl, int i, const Level& lv, const int* m,
                                const Adj* madj, int tau, int hb, int lane) {
    int t = lv.pos + lane;
    bool ok = t < lv.end;
    if (ok) {
        Entry e = load_entry(C.entries + adj_at(lv.a, t));
        const int c = e.nbr;
        const int nb = __ldcg(pl + PL_BNCNT + i);
        ok = candidate_ok(C, pl, i, lv.best, e, m, tau);
        for (int k = 0; ok && k < nb; ++k) {
            if (k == lv.best) continue;
            int j = __ldcg(pl + PL_BNPOS + i * KMAX + k);
            ok = in_list(C, hb, j, madj[j], c, tau, __ldcg(pl + PL_BNELAB + i * KMAX + k));
        }
    }
    return __ballot_sync(0xffffffffu, ok);
}

// Entry q of the run [off, off + len); past its end, one above every neighbour, so that a
// round of merge_window stays sorted over the lanes.
__device__ __forceinline__ Entry round_entry(const Ctx& C, i64 off, int q, int len) {
    return q < len ? load_entry(C.entries + off + q) : Entry{0x7fffffff, 0, 0, 0};
}

// Counting, the last step i with its two lists merged (merge_other): eval_window's ballot
// for the entries [lv.pos, wend) of the scanned list, all in one of its runs (so sorted by
// neighbour). The test in the other list o = madj[lv.other] reads the stretch of o that the
// window's neighbours span, 32 entries a round by the whole warp, each lane looking its
// neighbour up among them by shuffles, instead of a binary search of o a lane. A neighbour
// has at most one entry alive at tau in o, in either run, so each run is merged alone and a
// candidate counts when an entry of its neighbour in either run is alive with the wanted
// label. mc carries where the last window stopped in each run of o. Not inlined: its
// rounds then run without spills (nvcc 13.0, sm_90; inlined, run_item spilled 216/476 B).
__device__ __noinline__ unsigned merge_window(const Ctx& C, const int* pl, int i, const Level& lv,
                                              int wend, const int* m, const Adj* madj, int tau,
                                              MergeCursor& mc, int lane) {
    const int t = lv.pos + lane;
    bool ok = t < wend;
    int c = 0x7fffffff;  // past the window: above every neighbour
    const int arun = lv.pos < lv.a.blen ? 0 : 1;
    const Adj o = madj[lv.other];
    if (ok) {
        const Entry e = load_entry(C.entries + adj_at(lv.a, t));
        c = e.nbr;
        ok = candidate_ok(C, pl, i, lv.best, e, m, tau);
    }
    const int lo = __shfl_sync(0xffffffffu, c, 0), hi = __shfl_sync(0xffffffffu, c, wend - lv.pos - 1);
    const int want = __ldcg(pl + PL_BNELAB + i * KMAX + (1 - lv.best));
    bool hit = false;
    for (int r = 0; r < 2; ++r) {
        const i64 roff = r ? o.off2 + o.blen : o.off;
        const int rlen = r ? o.len - o.blen : o.blen;
        if (rlen == 0 || (mc.arun == arun && mc.v[r] > hi)) continue;
        int k = mc.arun == arun ? mc.k[r] : warp_lower_nbr(C, roff, rlen, lo, lane);
        // o's first entry >= hi in this run and its neighbour, once a round reaches it.
        int next = -1, nextv = 0x7fffffff;
        Entry b = round_entry(C, roff, k + lane, rlen);
        while (true) {
            const int q = k + lane;
            // MERGE_PREFETCH: the next round's entries are loaded before this round's are
            // used (loads wasted where this round is the last).
            const Entry after = MERGE_PREFETCH && k + 32 < rlen ? round_entry(C, roff, q + 32, rlen) : b;
            const unsigned alive = __ballot_sync(0xffffffffu, q < rlen && b.ct <= tau && tau <= b.dt &&
                                                              (want == ANY || b.elab == want));
            // This lane's neighbour is at entries [p0, p1) of the round, if any.
            const int p0 = lanes_below(b.nbr, c, false), p1 = lanes_below(b.nbr, c, true);
            hit = hit || (alive & (unsigned)(((1ULL << p1) - 1) & ~((1ULL << p0) - 1))) != 0;
            const int top = __shfl_sync(0xffffffffu, b.nbr, 31);
            if (next < 0 && top >= hi) {
                const int at = __popc(__ballot_sync(0xffffffffu, q < rlen && b.nbr < hi));
                next = k + at;
                nextv = __shfl_sync(0xffffffffu, b.nbr, at);  // at < 32: lane 31's is >= hi
            }
            if (top > hi || k + 32 >= rlen) break;
            k += 32;
            b = MERGE_PREFETCH ? after : round_entry(C, roff, k + lane, rlen);
        }
        mc.k[r] = next < 0 ? rlen : next;
        mc.v[r] = nextv;
    }
    mc.arun = arun;
    return __ballot_sync(0xffffffffu, ok && hit);
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
                                Adj* madj, int tau, unsigned mask, unsigned* longs, int hb, int lane) {
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
                ok = in_list(C, hb, j, j == i ? oa : madj[j], c, tau, want);
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

// If a warp waits for work, give it the untouched rest of the shallowest of levels s..i
// with some left (every DONATE_EVERY steps of run_item).
__device__ __forceinline__ void offer_rest(const Ctx& C, volatile BlockView& V, int tau, int slot_plan,
                                           int n, int s, int i, Level* L, const int* m, int lane) {
    int hungry = 0;
    if (lane == 0) { refresh_view(C, V); hungry = V.hungry; }
    if (!__shfl_sync(0xffffffffu, hungry, 0)) return;
    for (int j = s; j <= i; ++j) {
        // The windows not yet evaluated (a merged level's pos is past its last one already).
        const int from = L[j].pos + (MERGE_LAST && L[j].other >= 0 ? 0 : 32);
        if (L[j].end - from >= (j == n - 1 ? 64 : 1)) {
            donate(C, tau, slot_plan, j, from, L[j].end, m, lane);
            L[j].end = from;
            return;
        }
    }
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
    int hb = -1;  // the item's hub bitmap (hub_bits_for)
    {
        Level& lv = L[s];
        lv.best = pick_base(pl, s, madj);
        lv.a = madj[__ldcg(pl + PL_BNPOS + s * KMAX + lv.best)];
        lv.pos = it.pos;
        lv.end = it.end < 0 ? min(lv.a.len, it.pos + CHUNK) : min(lv.a.len, it.end);
        hb = hub_bits_for(C, pl, n, s, lv, madj, m, tau, emit, lane);
        lv.other = merge_other(pl, n, s, lv, madj, emit, hb);
        lv.mask = lv.other < 0 && lv.pos < lv.end ? eval_window(C, pl, s, lv, m, madj, tau, -1, lane) : 0u;
        lv.paired = -1;
    }
    MergeCursor mc;
    mc.arun = -1;
    int steps = 0, merges = L[s].other >= 0;
    while (i >= s) {
        Level& lv = L[i];
        if (MERGE_LAST && lv.other >= 0) {
            // The last level merged with its other list: a window a step, inside one run of
            // the scanned list.
            if (lv.pos >= lv.end) { --i; continue; }
            int wend = min(lv.end, lv.pos + 32);
            if (lv.pos < lv.a.blen) wend = min(wend, lv.a.blen);
            const unsigned got = merge_window(C, pl, i, lv, wend, m, madj, tau, mc, lane);
            if (CHECK) {
                Level w = lv;
                w.end = wend;
                const unsigned want = eval_window(C, pl, i, w, m, madj, tau, -1, lane);
                if (lane == 0 && got != want) check_fail(C, CHK_MERGE, tau, lv.pos, got ^ want);
            }
            total += __popc(got);
            lv.pos = wend;
            if (++steps % DONATE_EVERY == 0) offer_rest(C, V, tau, it.slot_plan, n, s, i, L, m, lane);
            continue;
        }
        if (lv.mask == 0) {
            lv.pos += 32;
            if (lv.pos >= lv.end) { --i; continue; }
            if (++steps % DONATE_EVERY == 0) offer_rest(C, V, tau, it.slot_plan, n, s, i, L, m, lane);
            lv.mask = eval_window(C, pl, i, lv, m, madj, tau, i == n - 1 ? hb : -1, lane);
            continue;
        }
        if (!emit && i == n - 2 && lv.paired != lv.pos && PAIRS_MAX_LIST > 0 &&
            (lv.mask & (lv.mask - 1u))) {  // two candidates or more
            // The window's candidates with short last levels at once; the rest below.
            unsigned longs;
            total += count_last_pairs(C, pl, n, lv, m, madj, tau, lv.mask, &longs, hb, lane);
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
        nx.other = merge_other(pl, n, i, nx, madj, emit, hb);
        nx.mask = nx.other < 0 && nx.end > 0
                      ? eval_window(C, pl, i, nx, m, madj, tau, i == n - 1 ? hb : -1, lane) : 0u;
        nx.paired = -1;
        if (nx.other >= 0) { mc.arun = -1; ++merges; }
    }
    if (MERGE_LAST && lane == 0 && merges) atomicAdd(&C.st->merged, (u64)merges);
    if (hb >= 0) hub_bits_release(C, hb, madj[hub_step(hb)], lane);
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

// Completion of the first n updates of a J_ITEMS task, taus tau - lane ... (lane < n holds
// its own: outcome, when it was taken), none of which has a work item (whole warp). As
// finalize_empty, but the Done records (three 16-byte words each, the stamp -1 at first)
// are written word q by lane q % 32, so that one store of the warp covers 512 contiguous
// bytes of host memory (32 lanes' 8-byte fields 48 bytes apart cover all twelve of the
// warp's 128-byte lines at each of five stores); then the fence, and each lane's stamp.
__device__ void finalize_empty_lines(const Ctx& C, i64 tau, int n, int outcome, u64 taken, int lane) {
    static_assert(sizeof(Done) == 48, "a completion record is three 16-byte words");
    const u64 now = gtime();
    const int4 own[3] = {
        make_int4(-1, -1, outcome, 0),  // tau (-1: not yet valid), outcome, nonzero
        make_int4((int)taken, (int)(taken >> 32), (int)now, (int)(now >> 32)),  // t_taken, t_start
        make_int4((int)now, (int)(now >> 32), 0, 0),  // t_finish, pad
    };
    const i64 first = tau - lane;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        const int q = 32 * k + lane, r = q / 3, part = q - 3 * r;
        int4 w[3];
#pragma unroll
        for (int j = 0; j < 3; ++j) {
            w[j].x = __shfl_sync(0xffffffffu, own[j].x, r);
            w[j].y = __shfl_sync(0xffffffffu, own[j].y, r);
            w[j].z = __shfl_sync(0xffffffffu, own[j].z, r);
            w[j].w = __shfl_sync(0xffffffffu, own[j].w, r);
        }
        if (r < n) reinterpret_cast<int4*>(C.done + (first + r) % MAXU)[part] = w[part];
    }
    warp_join();  // every lane's words before each lane's fence and stamp (cumulative)
    __threadfence_system();
    if (lane < n) {
        vstore(&C.done[tau % MAXU].tau, tau);
        vstore(&C.upd[tau % MAXU].done, tau);
    }
    warp_join();
    if (lane == 0) {
        __threadfence();
        atomicAdd(&C.st->completed, (u64)n);
    }
}
