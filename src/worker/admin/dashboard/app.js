// The admin dashboard's script (served as /admin/dashboard/app.js). It keeps the admin token in a variable of
// this closure only — never in a URL, storage or cookie — polls /admin/stats with it, and draws four uPlot
// charts from the figures: in-flight per backend, the reuse shares per interval, TTFT p50/p99 per arm, and
// decisions per second by route reason. Figures are cumulative on the server; rates come from differences
// between two polls.
(() => {
  // ?interval=ms sets the refresh (250 ms .. 60 s); 2 s by default.
  const asked = Number(new URLSearchParams(location.search).get("interval"));
  const POLL_MS = asked >= 250 && asked <= 60000 ? asked : 2000;
  const KEEP = 300;
  const COLORS = ["#2f6fde", "#e0702b", "#2a9d5b", "#c23b6b", "#7a55c8", "#8a6d1f", "#168a9c", "#596070"];
  const REASONS = ["affinity", "ring", "spill", "fallback"];

  let token = "";
  let timer;
  let previous;
  const charts = {};
  const series = {};
  const times = [];
  window.__dashboard = { charts, polls: 0, errors: 0 };

  const $ = (id) => document.getElementById(id);
  const setStatus = (text) => {
    $("status").textContent = text;
  };

  /** Appends a point for each named line of a chart; lines first seen now get nulls for the past. */
  function push(chart, values) {
    const lines = series[chart] ?? new Map();
    series[chart] = lines;
    for (const [name, v] of Object.entries(values)) {
      if (!lines.has(name)) lines.set(name, new Array(times.length - 1).fill(null));
      lines.get(name).push(v);
    }
    for (const [name, arr] of lines) {
      if (!(name in values)) arr.push(null);
      while (arr.length > times.length) arr.shift();
    }
  }

  function draw(chart, yLabel, percent) {
    const lines = series[chart];
    const el = $(`chart-${chart}`);
    const names = [...lines.keys()];
    const data = [times.slice(), ...names.map((n) => lines.get(n).slice())];
    const existing = charts[chart];
    if (existing !== undefined && existing.series.length === names.length + 1) {
      existing.setData(data);
      return;
    }
    existing?.destroy();
    const opts = {
      width: Math.max(320, el.clientWidth || 560),
      height: 240,
      scales: { x: { time: true }, y: percent ? { range: [0, 100] } : {} },
      axes: [{}, { label: yLabel }],
      series: [
        {},
        ...names.map((label, i) => ({ label, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: false })),
      ],
    };
    charts[chart] = new window.uPlot(opts, data, el);
  }

  const pct = (n, d) => (d > 0 ? (100 * n) / d : null);

  function update(stats) {
    const now = stats.at / 1000;
    const dt = previous === undefined ? 0 : now - previous.at / 1000;
    times.push(now);
    while (times.length > KEEP) times.shift();
    const inflight = {};
    const ttft = {};
    const reasons = Object.fromEntries(REASONS.map((r) => [r, 0]));
    const hits = { prompt: 0, available: 0, captured: 0, reported: 0, delivered: 0 };
    const pools = Object.entries(stats.pools).filter(([, p]) => p.ok);
    const many = pools.length > 1;
    for (const [model, p] of pools) {
      const tag = (s) => (many ? `${model} ${s}` : s);
      for (const b of p.backends) inflight[tag(b.id)] = b.inflight;
      hits.prompt += p.hits.promptTokens;
      hits.available += p.hits.available;
      hits.captured += p.hits.captured;
      hits.reported += p.hits.reportedPromptTokens;
      hits.delivered += p.hits.delivered;
      for (const a of p.arms) {
        const name = tag(`${a.arm} (${a.policy})`);
        ttft[`${name} p50`] = a.ttftMs.p50;
        ttft[`${name} p99`] = a.ttftMs.p99;
        for (const r of REASONS) reasons[r] += a.reasons[r] ?? 0;
      }
    }
    const last = previous?.totals;
    const d = (k) => (last === undefined ? hits[k] : hits[k] - last.hits[k]);
    push("inflight", inflight);
    push("hits", {
      available: pct(d("available"), d("prompt")),
      captured: pct(d("captured"), d("prompt")),
      delivered: pct(d("delivered"), d("reported")),
    });
    push("ttft", ttft);
    push(
      "reasons",
      Object.fromEntries(
        REASONS.map((r) => [r, last === undefined || dt <= 0 ? null : (reasons[r] - last.reasons[r]) / dt]),
      ),
    );
    previous = { at: stats.at, totals: { hits, reasons } };
    draw("inflight", "requests", false);
    draw("hits", "% of prompt tokens", true);
    draw("ttft", "ms", false);
    draw("reasons", "decisions/s", false);
    summary(stats, hits, pools);
  }

  function tile(label, value) {
    const div = document.createElement("div");
    div.className = "tile";
    const b = document.createElement("b");
    b.textContent = value;
    div.append(b, label);
    return div;
  }

  function summary(stats, hits, pools) {
    const fmt = (v) => (v === null ? "–" : `${v.toFixed(1)}%`);
    const tiles = [
      tile("reuse available", fmt(pct(hits.available, hits.prompt))),
      tile("reuse captured", fmt(pct(hits.captured, hits.prompt))),
      tile("reuse delivered", fmt(pct(hits.delivered, hits.reported))),
    ];
    for (const [, p] of pools) {
      if (p.shadow !== undefined)
        tiles.push(
          tile(
            "shadow (prefix_aware) expected",
            fmt(p.shadow.expectedHitRate === null ? null : 100 * p.shadow.expectedHitRate),
          ),
        );
      for (const a of p.arms)
        tiles.push(
          tile(
            `arm ${a.arm} (${a.policy}): requests, delivered`,
            `${a.requests} · ${fmt(a.hitRate.delivered === null ? null : 100 * a.hitRate.delivered)}`,
          ),
        );
    }
    $("summary").replaceChildren(...tiles);
    const table = document.createElement("table");
    const head = table.insertRow();
    for (const h of [
      "backend",
      "pool",
      "in rotation",
      "drained",
      "in flight",
      "faults",
      "/v1/models check",
    ]) {
      const th = document.createElement("th");
      th.textContent = h;
      head.append(th);
    }
    for (const [model, p] of pools)
      for (const b of p.backends) {
        const row = table.insertRow();
        for (const v of [
          b.id,
          model,
          rotationText(b),
          b.drained ? "drained" : "",
          b.inflight,
          b.consecutiveFailures,
          checkText(b.check),
        ])
          row.insertCell().textContent = String(v);
      }
    $("backends").replaceChildren(table);
    setStatus(
      `live · ${new Date(stats.at).toLocaleTimeString()} · policy ${stats.policy}${stats.abPolicy ? ` vs ${stats.abPolicy}` : ""}${stats.shadow ? " · shadow on" : ""}`,
    );
  }

  /**
   * In rotation or ejected, and why a backend held out stays out that long: its relapses in a row (failed again
   * soon after its probes brought it back: each doubles the wait for its next probe) and when that probe is due.
   */
  function rotationText(b) {
    const parts = [b.healthy ? "yes" : "ejected"];
    if (b.relapses) parts.push(`relapsed ${b.relapses}×`);
    if (b.probation) parts.push(`on probation (${b.probation} to go)`);
    if (b.nextProbeAt !== undefined) parts.push(`next probe ${new Date(b.nextProbeAt).toLocaleTimeString()}`);
    return parts.join(" · ");
  }

  /** A backend's latest /v1/models check (BACKEND_CHECK_SECONDS): its state and status; empty when off or not yet. */
  function checkText(check) {
    if (!check) return "";
    if (check.state === "ok") return "ok";
    return `${check.state.replaceAll("_", " ")}${check.status !== undefined ? ` (${check.status})` : ""}`;
  }

  async function poll() {
    try {
      const res = await fetch("/admin/stats", {
        headers: { authorization: `Bearer ${token}` },
        cache: "no-store",
      });
      if (res.status === 401) return signOut("wrong admin token");
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      update(await res.json());
      window.__dashboard.polls++;
    } catch (err) {
      window.__dashboard.errors++;
      setStatus(`stats unavailable (${err.message}); retrying`);
    }
    timer = setTimeout(poll, POLL_MS);
  }

  function signOut(why) {
    clearTimeout(timer);
    token = "";
    $("board").hidden = true;
    $("login").hidden = false;
    setStatus(why);
  }

  $("login").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $("token");
    token = input.value;
    input.value = "";
    $("login").hidden = true;
    $("board").hidden = false;
    setStatus("connecting…");
    poll();
  });
})();
