// Median time of 401s for admin tokens that match the real one in 0, 20 (all but the last char) characters,
// or are 1 char long, interleaved, 100 rounds: a non-constant-time compare would show the near-miss as slower.
// Loopback noise is ~0.1 ms, so this can only show a gross leak; the code (SHA-256 digests, timingSafeEqual) is the proof.
const G = "http://127.0.0.1:8787/admin/stats";
const real = "pgw-local-admin-token";
const cands = { nearMiss: real.slice(0, -1) + "x", farMiss: "x".repeat(real.length), short: "x" };
const t = { nearMiss: [], farMiss: [], short: [] };
for (let i = 0; i < 100; i++)
  for (const [k, tok] of Object.entries(cands)) {
    const t0 = performance.now();
    const r = await fetch(G, { headers: { authorization: `Bearer ${tok}` } });
    await r.arrayBuffer();
    t[k].push(performance.now() - t0);
    if (r.status !== 401) throw new Error(`${k}: ${r.status}`);
  }
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1].toFixed(3);
console.log(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, `${med(v)} ms median`])));
