// The live page: polls the service's JSON API once a second, keeps its own history of what
// it saw (from the moment the page opened), subscribes to every query's websocket with
// ?encoding=batch, and draws patterns, matches and charts as SVG. No dependencies.
"use strict";

(function () {
  const POLL_MS = 1000;
  const HISTORY_S = 120; // the charts' time window
  const RECENT_MATCHES = 6; // matches drawn per query
  const RECENT_COUNTS = 8; // count rows listed per count-mode query
  const WS_QUEUE_FRAMES = 256; // the page's bound on frames waiting for it at the service
  const MAX_EVENTS = 60;
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
                   "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"];
  const SVG_NS = "http://www.w3.org/2000/svg";

  const state = {
    queries: new Map(), // name -> QueryView
    token: sessionStorage.getItem("dcsm-token") || "",
    status: null,
    prevStatus: null, // {t, processed}
    history: { t: [], throughput: [], lag: [], queued: [] },
    connected: null,
    events: [],
  };

  // ---- small helpers ---------------------------------------------------------------------

  const $ = (id) => document.getElementById(id);
  const now = () => Date.now() / 1000;

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c);
    return e;
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function fmt(x, digits) {
    if (x === null || x === undefined || Number.isNaN(x)) return "-";
    if (digits !== undefined) return x.toFixed(digits);
    const a = Math.abs(x);
    if (a >= 1e6) return (x / 1e6).toFixed(a >= 1e7 ? 0 : 1) + "M";
    if (a >= 1e4) return (x / 1e3).toFixed(a >= 1e5 ? 0 : 1) + "k";
    if (a >= 100 || Number.isInteger(x)) return Math.round(x).toLocaleString("en-US");
    return x.toFixed(a >= 10 ? 1 : 2);
  }

  function fmtDuration(s) {
    if (s < 60) return `${Math.floor(s)} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${Math.floor(s % 60)} s`;
    return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  }

  // Data vertex ids go up to 2^63: integers past 2^53 keep their exact digits as strings
  // (JSON.parse's source text, where the browser offers it).
  function parseJSON(text) {
    return JSON.parse(text, (k, v, ctx) =>
      typeof v === "number" && Number.isInteger(v) && !Number.isSafeInteger(v) && ctx && ctx.source
        ? ctx.source : v);
  }

  // A service with tokens: every call carries the one given in the header's token box
  // (kept for this tab only); a websocket offers it as the "bearer.<token>" subprotocol.
  async function api(path, opts) {
    opts = Object.assign({ cache: "no-store" }, opts);
    if (state.token) {
      opts.headers = Object.assign({}, opts.headers, { Authorization: `Bearer ${state.token}` });
    }
    const r = await fetch(path, opts);
    if (r.status === 401 || r.status === 403) {
      $("token-form").hidden = false;
      $("token-why").textContent = r.status === 401 ? "this service needs a token"
        : "this token may not do that";
    }
    return r;
  }

  async function getJSON(path) {
    const r = await api(path);
    if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
    return parseJSON(await r.text());
  }

  function errorText(body, status) {
    const e = body && body.error;
    if (!e) return `HTTP ${status}`;
    return e.message || e.code || `HTTP ${status}`;
  }

  function logEvent(kind, text) {
    const t = new Date();
    state.events.unshift({ t, kind, text });
    state.events.length = Math.min(state.events.length, MAX_EVENTS);
    const ul = $("events");
    ul.prepend(el("li", { class: `ev ev-${kind}` },
      el("time", {}, t.toLocaleTimeString("en-GB")), el("span", {}, text)));
    while (ul.children.length > MAX_EVENTS) ul.lastChild.remove();
  }

  function pushHistory(h, t, values) {
    h.t.push(t);
    for (const [k, v] of Object.entries(values)) h[k].push(v);
    while (h.t.length && h.t[0] < t - HISTORY_S) {
      for (const k of Object.keys(h)) h[k].shift();
    }
  }

  // ---- charts ----------------------------------------------------------------------------

  // A round step (1, 2, 2.5 or 5 x 10^k) for about four gridlines up to v.
  function niceStep(v) {
    if (!(v > 0)) return 0.25;
    const raw = v / 4;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  // series: [{label, color, values, dash}] aligned with times; markers: times of gaps.
  function drawChart(root, times, series, opts) {
    opts = opts || {};
    const vb = root.viewBox.baseVal;
    const W = vb.width, H = vb.height;
    const L = 46, R = 10, T = 22, B = 20;
    // The window grows with the history, from 10 s up to HISTORY_S.
    const t1 = Math.max(now(), times.length ? times[times.length - 1] : 0);
    const span = Math.min(HISTORY_S, Math.max(10, times.length ? t1 - times[0] : 0));
    const t0 = t1 - span;
    let vmax = 0;
    for (const s of series) for (const v of s.values) if (v !== null && v > vmax) vmax = v;
    const step = niceStep(vmax);
    const ymax = Math.max(step, step * Math.ceil(vmax / step - 1e-9));
    const x = (t) => L + ((t - t0) / span) * (W - L - R);
    const y = (v) => T + (1 - v / ymax) * (H - T - B);
    root.replaceChildren();
    for (let v = 0; v <= ymax + step / 2; v += step) {
      root.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }));
      root.append(svg("text", { x: L - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" },
        fmt(v)));
    }
    const tstep = [2, 5, 10, 15, 30, 60].find((d) => span / d <= 5) || 60;
    for (let s = 0; s <= span + 1e-6; s += tstep) {
      root.append(svg("text", { x: x(t1 - s), y: H - 5, class: "tick",
        "text-anchor": s === 0 ? "end" : "middle" }, s === 0 ? "now" : `-${s}s`));
    }
    for (const m of opts.markers || []) {
      if (m < t0) continue;
      root.append(svg("line", { x1: x(m), x2: x(m), y1: T, y2: H - B, class: "gap-mark" }));
    }
    let lx = L;
    for (const s of series) {
      let d = "";
      let pen = false;
      for (let i = 0; i < times.length; i++) {
        const v = s.values[i];
        if (v === null || v === undefined || times[i] < t0) { pen = false; continue; }
        d += `${pen ? "L" : "M"}${x(times[i]).toFixed(1)},${y(v).toFixed(1)}`;
        pen = true;
      }
      if (d) {
        root.append(svg("path", { d, fill: "none", stroke: s.color, "stroke-width": 2,
          "stroke-linejoin": "round", "stroke-dasharray": s.dash || "" }));
      }
      const last = s.values.length ? s.values[s.values.length - 1] : null;
      const label = `${s.label} ${fmt(last)}${opts.unit ? " " + opts.unit : ""}`;
      root.append(svg("rect", { x: lx, y: 6, width: 10, height: 10, rx: 2, fill: s.color }));
      const txt = svg("text", { x: lx + 14, y: 15, class: "legend" }, label);
      root.append(txt);
      lx += 22 + 6.4 * label.length;
    }
    if (!times.length) {
      root.append(svg("text", { x: W / 2, y: H / 2, class: "tick", "text-anchor": "middle" },
        "waiting for data"));
    }
  }

  // ---- patterns and matches --------------------------------------------------------------

  // Vertex positions in [0,1]^2: a circle, relaxed by a few deterministic spring steps so
  // larger patterns untangle (triangles, squares and diamonds stay as drawn by hand).
  function layoutPattern(spec) {
    const n = spec.vertices.length;
    const pos = [];
    for (let i = 0; i < n; i++) {
      const a = -Math.PI / 2 + (2 * Math.PI * i) / n + (n === 4 ? Math.PI / 4 : 0);
      pos.push([Math.cos(a), Math.sin(a)]);
    }
    if (n > 4) {
      const k = Math.sqrt(4 / n);
      for (let it = 0; it < 150; it++) {
        const disp = pos.map(() => [0, 0]);
        for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
          if (i === j) continue;
          const dx = pos[i][0] - pos[j][0], dy = pos[i][1] - pos[j][1];
          const d = Math.max(Math.hypot(dx, dy), 0.01);
          disp[i][0] += (dx / d) * (k * k) / d;
          disp[i][1] += (dy / d) * (k * k) / d;
        }
        for (const e of spec.edges) {
          const dx = pos[e.u][0] - pos[e.v][0], dy = pos[e.u][1] - pos[e.v][1];
          const d = Math.max(Math.hypot(dx, dy), 0.01);
          const f = (d * d) / k;
          disp[e.u][0] -= (dx / d) * f; disp[e.u][1] -= (dy / d) * f;
          disp[e.v][0] += (dx / d) * f; disp[e.v][1] += (dy / d) * f;
        }
        const temp = 0.1 * (1 - it / 150);
        for (let i = 0; i < n; i++) {
          const d = Math.max(Math.hypot(disp[i][0], disp[i][1]), 1e-9);
          pos[i][0] += (disp[i][0] / d) * Math.min(d, temp);
          pos[i][1] += (disp[i][1] / d) * Math.min(d, temp);
        }
      }
    }
    const xs = pos.map((p) => p[0]), ys = pos.map((p) => p[1]);
    const x0 = Math.min(...xs), y0 = Math.min(...ys);
    const span = Math.max(Math.max(...xs) - x0, Math.max(...ys) - y0, 1e-9);
    return pos.map(([px, py]) => [(px - x0) / span, (py - y0) / span]);
  }

  function labelColor(label) {
    return label === null || label === undefined ? "#ffffff" : PALETTE[label % PALETTE.length];
  }

  // Draw spec's shape into root (viewBox W x H). texts[i] is written in vertex i (pattern
  // vertex ids for a pattern, data vertex ids for a match).
  function drawGraph(root, spec, pos, texts, opts) {
    opts = opts || {};
    const vb = root.viewBox.baseVal;
    const W = vb.width, H = vb.height;
    const font = opts.font || 11;
    const widths = texts.map((s) => Math.max(font * 1.9, 0.62 * font * String(s).length + 12));
    const padX = Math.max(...widths) / 2 + 3, padY = font + 4;
    const P = pos.map(([px, py]) => [padX + px * (W - 2 * padX), padY + py * (H - 2 * padY)]);
    root.replaceChildren();
    for (const e of spec.edges) {
      const [a, b] = [P[e.u], P[e.v]];
      root.append(svg("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: "edge" }));
      if (e.label !== null && e.label !== undefined) {
        const mx = (a[0] + b[0]) / 2, my = (a[1] + b[1]) / 2;
        root.append(svg("text", { x: mx, y: my - 3, class: "edge-label",
          "text-anchor": "middle" }, String(e.label)));
      }
    }
    spec.vertices.forEach((v, i) => {
      const label = v.label;
      const w = widths[i], h = font * 1.9;
      const g = svg("g", { class: "vertex" });
      g.append(svg("title", {}, `pattern vertex ${v.id}, label ${label ?? "any"}` +
        (opts.data ? `: data vertex ${texts[i]}` : "")));
      g.append(svg("rect", { x: P[i][0] - w / 2, y: P[i][1] - h / 2, width: w, height: h,
        rx: h / 2, fill: labelColor(label), class: label === null || label === undefined
          ? "any" : "fixed" }));
      const dark = label === null || label === undefined || [6, 9].includes(label % 10);
      g.append(svg("text", { x: P[i][0], y: P[i][1] + font * 0.36, "text-anchor": "middle",
        "font-size": font, fill: dark ? "#1f2937" : "#ffffff" }, String(texts[i])));
      root.append(g);
    });
  }

  function patternSummary(spec, mode) {
    const labels = spec.vertices.map((v) => (v.label === null || v.label === undefined
      ? "*" : v.label)).join(",");
    const bits = [`${spec.vertices.length} vertices`, `${spec.edges.length} edges`,
      `labels ${labels}`];
    if (spec.distinct) bits.push("distinct");
    bits.push(mode);
    return bits.join(" · ");
  }

  // ---- one query -------------------------------------------------------------------------

  class QueryView {
    constructor(info) {
      this.name = info.name;
      this.info = info;
      this.spec = info.query;
      this.mode = info.mode;
      this.pos = layoutPattern(this.spec);
      this.history = { t: [], plus: [], minus: [], p50: [], p95: [], p99: [] };
      this.prev = null; // {t, plus, minus}
      this.stats = null;
      this.recent = []; // {sign, seq, match} newest first
      this.recentCounts = []; // {sign, seq, count}
      this.rowsSeen = 0;
      this.gaps = 0;
      this.gapTimes = [];
      this.ended = false;
      this.ws = null;
      this.wsRetryAt = 0;
      this.dirty = true;
      this.build();
    }

    build() {
      const kind = this.mode === "count" ? "counts" : "matches";
      this.dom = {};
      const d = this.dom;
      d.pattern = svg("svg", { class: "pattern", viewBox: "0 0 150 120" });
      drawGraph(d.pattern, this.spec, this.pos, this.spec.vertices.map((v) => v.id));
      d.plus = el("span", { class: "plus big" }, "0");
      d.minus = el("span", { class: "minus big" }, "0");
      d.gaps = el("span", { class: "gaps" });
      d.state = el("span", { class: "badge" }, this.info.state);
      d.del = el("button", { class: "danger small", type: "button",
        onclick: () => this.askDelete() }, "delete");
      d.rates = svg("svg", { class: "chart", viewBox: "0 0 480 120" });
      d.latency = svg("svg", { class: "chart", viewBox: "0 0 480 120" });
      d.recent = el("div", { class: kind === "matches" ? "matches" : "counts" });
      d.ws = el("span", { class: "ws muted small" }, "websocket: connecting");
      this.card = el("article", { class: "card query-card", "data-name": this.name },
        el("header", {},
          el("h3", {}, this.name), el("span", { class: `badge mode-${this.mode}` }, this.mode),
          d.state, el("span", { class: "muted small" }, `from seq ${this.info.from_seq}`),
          el("span", { class: "spacer" }), d.gaps, d.del),
        el("div", { class: "card-body" },
          el("div", { class: "left" }, d.pattern,
            el("div", { class: "muted small summary" }, patternSummary(this.spec, this.mode)),
            el("div", { class: "totals" },
              el("div", {}, d.plus, el("div", { class: "muted small" }, "created")),
              el("div", {}, d.minus, el("div", { class: "muted small" }, "destroyed")))),
          el("div", { class: "right" },
            el("figure", {}, el("figcaption", {},
              this.mode === "count" ? "matches counted per second" : "match deltas per second"),
              d.rates),
            el("figure", {}, el("figcaption", {},
              "match latency, ms (update's arrival \u2192 its frame emitted)"), d.latency))),
        el("div", { class: "recent-head" },
          el("span", {}, this.mode === "count" ? "latest counts" : "latest matches"), d.ws),
        d.recent);
      this.renderRecent();
    }

    askDelete() {
      const b = this.dom.del;
      if (b.dataset.armed) {
        this.remove();
        return;
      }
      b.dataset.armed = "1";
      b.textContent = "confirm delete";
      setTimeout(() => { delete b.dataset.armed; b.textContent = "delete"; }, 3000);
    }

    async remove() {
      const r = await api(`api/v1/queries/${encodeURIComponent(this.name)}`,
        { method: "DELETE" });
      let body = null;
      try { body = parseJSON(await r.text()); } catch (e) { /* not JSON */ }
      if (r.ok) {
        const s = body.stats.deltas;
        logEvent("delete", `${this.name} deleted (final: +${fmt(s["+"])} / -${fmt(s["-"])})`);
      } else {
        logEvent("error", `delete ${this.name}: ${errorText(body, r.status)}`);
      }
      await tick();
    }

    connect() {
      if (this.ws || this.ended || now() < this.wsRetryAt) return;
      const kind = this.mode === "count" ? "counts" : "matches";
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      const base = location.pathname.replace(/[^/]*$/, "");
      const url = `${scheme}//${location.host}${base}api/v1/queries/` +
        `${encodeURIComponent(this.name)}/${kind}?encoding=batch&queue=${WS_QUEUE_FRAMES}`;
      const ws = state.token ? new WebSocket(url, ["dcsm", `bearer.${state.token}`])
        : new WebSocket(url);
      this.ws = ws;
      ws.onopen = () => { this.dom.ws.textContent = "websocket: live"; };
      ws.onmessage = (m) => this.onFrame(parseJSON(m.data));
      ws.onclose = (e) => {
        this.ws = null;
        this.dom.ws.textContent = `websocket: closed (${e.code})`;
        this.wsRetryAt = now() + 2;
      };
    }

    onFrame(f) {
      const t = now();
      if (f.type === "gap") {
        this.gaps += f.dropped;
        this.gapTimes.push(t);
        logEvent("gap", `${this.name}: gap, the service dropped ${fmt(f.dropped)} frame(s) ` +
          "this page could not take in time");
      } else if (f.type === "end") {
        this.ended = true;
        logEvent("delete", `${this.name}: stream ended (${f.reason || "query deleted"})`);
      } else if (f.type === "deltas") {
        for (let i = Math.max(0, f.seq.length - RECENT_MATCHES); i < f.seq.length; i++) {
          this.recent.unshift({ sign: f.sign[i], seq: f.seq[i], match: f.match[i],
            backfill: !!f.backfill });
        }
        this.recent.length = Math.min(this.recent.length, RECENT_MATCHES);
        this.rowsSeen += f.seq.length;
      } else if (f.type === "counts") {
        for (let i = Math.max(0, f.seq.length - RECENT_COUNTS); i < f.seq.length; i++) {
          this.recentCounts.unshift({ sign: f.sign[i], seq: f.seq[i], count: f.count[i] });
        }
        this.recentCounts.length = Math.min(this.recentCounts.length, RECENT_COUNTS);
        this.rowsSeen += f.seq.length;
      }
      this.dirty = true;
    }

    // Server-side stats: totals since registration and percentiles over the service's
    // latency window; rates from the difference between two polls.
    takeStats(info, t) {
      this.info = info;
      const s = info.stats;
      const plus = s.deltas["+"], minus = s.deltas["-"];
      const lat = s.match_latency_seconds || {};
      const ms = (v) => (v === null || v === undefined ? null : v * 1000);
      if (this.prev) {
        const dt = Math.max(t - this.prev.t, 1e-3);
        pushHistory(this.history, t, {
          plus: (plus - this.prev.plus) / dt, minus: (minus - this.prev.minus) / dt,
          p50: ms(lat.p50), p95: ms(lat.p95), p99: ms(lat.p99),
        });
      }
      this.prev = { t, plus, minus };
      this.stats = s;
      this.dirty = true;
    }

    render() {
      const d = this.dom;
      if (this.stats) {
        d.plus.textContent = "+" + fmt(this.stats.deltas["+"]);
        d.minus.textContent = "\u2212" + fmt(this.stats.deltas["-"]);
      }
      d.state.textContent = this.ended ? "ended" : this.info.state;
      d.state.className = `badge state-${this.ended ? "ended" : this.info.state}`;
      d.gaps.textContent = this.gaps ? `gaps: ${fmt(this.gaps)} frame(s) dropped` : "";
      d.gaps.className = this.gaps ? "gaps gap-on" : "gaps";
      const h = this.history;
      drawChart(d.rates, h.t, [
        { label: "+", color: "#2e9e5b", values: h.plus },
        { label: "\u2212", color: "#d64545", values: h.minus },
      ], { markers: this.gapTimes, unit: "/s" });
      drawChart(d.latency, h.t, [
        { label: "p50", color: "#4e79a7", values: h.p50 },
        { label: "p95", color: "#f28e2b", values: h.p95 },
        { label: "p99", color: "#e15759", values: h.p99 },
      ], { markers: this.gapTimes });
      if (this.dirty) this.renderRecent();
      this.dirty = false;
    }

    renderRecent() {
      const box = this.dom.recent;
      box.replaceChildren();
      if (this.mode === "count") {
        if (!this.recentCounts.length) box.append(el("p", { class: "empty" }, "no count yet"));
        for (const c of this.recentCounts) {
          box.append(el("span", { class: `count-row ${c.sign > 0 ? "plus" : "minus"}` },
            `seq ${c.seq}: ${c.sign > 0 ? "+" : "\u2212"}${fmt(c.count)}`));
        }
        return;
      }
      if (!this.recent.length) box.append(el("p", { class: "empty" }, "no match yet"));
      for (const m of this.recent) {
        const pic = svg("svg", { class: "match-graph", viewBox: "0 0 132 92" });
        drawGraph(pic, this.spec, this.pos, m.match, { font: 10, data: true });
        box.append(el("div", { class: `match ${m.sign > 0 ? "match-plus" : "match-minus"}` },
          el("div", { class: "match-head" },
            el("b", {}, m.sign > 0 ? "+" : "\u2212"),
            el("span", {}, `seq ${m.seq}${m.backfill ? " (backfill)" : ""}`)),
          pic));
      }
    }

    close() {
      this.ended = true;
      if (this.ws) this.ws.close();
      this.card.remove();
    }
  }

  // ---- polling ---------------------------------------------------------------------------

  function setConnected(ok, why) {
    if (state.connected === ok) return;
    state.connected = ok;
    const c = $("conn");
    c.textContent = ok ? "connected" : "disconnected";
    c.className = `chip ${ok ? "chip-ok" : "chip-bad"}`;
    logEvent(ok ? "info" : "error", ok ? "connected to the service"
      : `lost the service (${why}); retrying every second`);
  }

  async function listQueries() {
    const items = [];
    let token = null;
    do {
      const q = token ? `&pageToken=${encodeURIComponent(token)}` : "";
      const page = await getJSON(`api/v1/queries?pageSize=1000${q}`);
      items.push(...page.items);
      token = page.nextPageToken;
    } while (token);
    return items;
  }

  let ticking = false;
  async function tick() {
    if (ticking) return;
    ticking = true;
    try {
      const t = now();
      const [status, items] = await Promise.all([getJSON("api/v1/status"), listQueries()]);
      setConnected(true);
      takeStatus(status, t);
      const names = new Set(items.map((i) => i.name));
      for (const [name, q] of state.queries) {
        if (!names.has(name)) { q.close(); state.queries.delete(name); }
      }
      for (const info of items) {
        if (!state.queries.has(info.name)) {
          const q = new QueryView(info);
          state.queries.set(info.name, q);
          $("queries").append(q.card);
        }
      }
      const details = await Promise.all(items.map((i) =>
        getJSON(`api/v1/queries/${encodeURIComponent(i.name)}`).catch(() => null)));
      for (const info of details) {
        const q = info && state.queries.get(info.name);
        if (!q) continue;
        q.takeStats(info, t);
        if (info.state !== "deleting") q.connect();
      }
      $("no-queries").hidden = state.queries.size > 0;
    } catch (e) {
      setConnected(false, e.message || String(e));
    } finally {
      ticking = false;
      render();
    }
  }

  function takeStatus(s, t) {
    state.status = s;
    const processed = s.processed_seq + 1;
    let throughput = null;
    if (state.prevStatus) {
      const dt = Math.max(t - state.prevStatus.t, 1e-3);
      throughput = Math.max(0, (processed - state.prevStatus.processed) / dt);
    }
    state.prevStatus = { t, processed };
    if (throughput !== null) {
      pushHistory(state.history, t, { throughput,
        lag: s.kafka ? s.kafka.lag : null, queued: s.queued_updates });
    }
  }

  function render() {
    const s = state.status;
    if (s) {
      $("version").textContent = `v${s.version}`;
      $("t-engine").textContent = `${s.engine.backend}${s.engine.ready ? "" : " (warming up)"}`;
      $("t-processed").textContent = fmt(s.processed_seq + 1);
      const h = state.history;
      const last = (a) => (a.length ? a[a.length - 1] : null);
      $("t-throughput").textContent = `${fmt(last(h.throughput))} /s`;
      $("t-lag").textContent = s.kafka ? fmt(s.kafka.lag) : "no Kafka";
      $("t-queued").textContent = fmt(s.queued_updates);
      $("t-queries").textContent = fmt(s.queries);
      $("t-uptime").textContent = fmtDuration(s.uptime_seconds);
    }
    const h = state.history;
    drawChart($("chart-throughput"), h.t,
      [{ label: "processed", color: "#4e79a7", values: h.throughput }], { unit: "/s" });
    drawChart($("chart-lag"), h.t, [
      { label: "Kafka records not read", color: "#f28e2b", values: h.lag },
      { label: "updates queued", color: "#b07aa1", values: h.queued, dash: "5 3" },
    ]);
    for (const q of state.queries.values()) q.render();
  }

  // Matches arrive between polls: redraw the cards whose recent list changed.
  function renderRecentOnly() {
    for (const q of state.queries.values()) {
      if (q.dirty) { q.renderRecent(); q.dirty = false; }
    }
  }

  // ---- the registration form -------------------------------------------------------------

  // "*, 1, 2" and "0-1 1-2:3" -> a QuerySpec body (throws with a readable message).
  function formSpec() {
    const labels = $("f-labels").value.split(/[\s,]+/).filter(Boolean).map((x) => {
      if (x === "*" || x === "any") return null;
      if (!/^\d+$/.test(x)) throw new Error(`vertex label ${JSON.stringify(x)}: a number or *`);
      return Number(x);
    });
    const edges = $("f-edges").value.split(/[\s,;]+/).filter(Boolean).map((x) => {
      const m = /^(\d+)-(\d+)(?::(\d+|\*))?$/.exec(x);
      if (!m) throw new Error(`edge ${JSON.stringify(x)}: write u-v or u-v:label`);
      const label = m[3] === undefined || m[3] === "*" ? null : Number(m[3]);
      return { u: Number(m[1]), v: Number(m[2]), label };
    });
    for (const e of edges) {
      if (e.u >= labels.length || e.v >= labels.length) {
        throw new Error(`edge ${e.u}-${e.v}: vertices are 0..${labels.length - 1}`);
      }
    }
    return {
      name: $("f-name").value.trim(),
      vertices: labels.map((label, id) => ({ id, label })),
      edges,
      distinct: $("f-distinct").checked,
      mode: $("f-mode").value,
    };
  }

  function preview() {
    const root = $("f-preview");
    try {
      const spec = formSpec();
      if (!spec.vertices.length) throw new Error("no vertex");
      drawGraph(root, spec, layoutPattern(spec), spec.vertices.map((v) => v.id));
      $("f-message").textContent = "";
      $("f-message").className = "message";
    } catch (e) {
      root.replaceChildren();
      $("f-message").textContent = e.message;
      $("f-message").className = "message error";
    }
  }

  async function submit(ev) {
    ev.preventDefault();
    const msg = $("f-message");
    let spec;
    try {
      spec = formSpec();
    } catch (e) {
      msg.textContent = e.message;
      msg.className = "message error";
      return;
    }
    const backfill = $("f-backfill").checked ? "?backfill=true" : "";
    const r = await api(`api/v1/queries${backfill}`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(spec),
    });
    let body = null;
    try { body = parseJSON(await r.text()); } catch (e) { /* not JSON */ }
    if (r.status === 201) {
      msg.textContent = `registered ${body.name}: it sees every update from seq ${body.from_seq}`;
      msg.className = "message ok";
      logEvent("register", `${body.name} registered from seq ${body.from_seq}` +
        (body.backfill !== null ? `, ${fmt(body.backfill)} backfilled` : ""));
      $("f-name").value = "";
      await tick();
    } else {
      const text = errorText(body, r.status);
      const details = body && body.error && body.error.details || [];
      msg.textContent = text + (details.length && !text.includes(details[0].reason)
        ? ` (${details.map((d) => `${d.field}: ${d.reason}`).join("; ")})` : "");
      msg.className = "message error";
      logEvent("error", `register ${spec.name}: ${text}`);
    }
  }

  // ---- start -----------------------------------------------------------------------------

  $("register").addEventListener("submit", submit);
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem("dcsm-token", state.token);
    $("token-form").hidden = true;
    for (const q of state.queries.values()) if (q.ws) q.ws.close();
    tick();
  });
  for (const id of ["f-labels", "f-edges"]) $(id).addEventListener("input", preview);
  preview();
  tick();
  setInterval(tick, POLL_MS);
  setInterval(renderRecentOnly, 250);

  // For the browser test and the curious: the page's state and its frame handler.
  window.dcsmPage = {
    state,
    onFrame: (name, frame) => state.queries.get(name).onFrame(frame),
    render,
  };
})();
