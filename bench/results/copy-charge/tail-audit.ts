// copy-charge's tail audit: multi-turn MoE 45 req/s, one seed, prefix_aware as bench:sim runs it, request by
// request (backend, reason, cached tokens, TTFT), written to OUT.json; with two such files, the pair compared.
// An audit only: nothing here feeds the router.
//   run:     npx tsx bench/results/copy-charge/tail-audit.ts run SEED OUT.json     (in a tree with main's src or the patch)
//   compare: npx tsx bench/results/copy-charge/tail-audit.ts compare MAIN.json PATCH.json
import { readFileSync, writeFileSync } from "node:fs";
import { simulatePolicy } from "../../../sim/simulator";
import { routerFactory, viewOf } from "../../../sim/policies";
import { loadAuditRun } from "../audit-run";

interface Run {
  backend: number[];
  reason: string[];
  cached: number[];
  ttft: number[];
  prompt: number[];
  arrival: number[];
}

const [mode, a, b] = process.argv.slice(2);
if (mode === "run") {
  const seed = Number(a);
  const { w, fleet } = await loadAuditRun({
    spec: "multi-turn",
    backends: 8,
    load: 45,
    set: "none",
    seed,
    preset: "qwen3-30b-a3b-h100-vllm",
    requests: 10000,
  });
  const n = w.requests.length;
  const run: Run = {
    backend: new Array(n).fill(-1),
    reason: new Array(n).fill(""),
    cached: new Array(n).fill(0),
    ttft: new Array(n).fill(Number.NaN),
    prompt: w.requests.map((r) => r.promptTokens),
    arrival: w.requests.map((r) => r.arrivalMs),
  };
  const r = simulatePolicy(
    w,
    fleet,
    "prefix_aware",
    routerFactory("prefix_aware", w.blockTokens),
    viewOf("prefix_aware"),
    undefined,
    {
      routed(i, backend, decision) {
        run.backend[i] = backend;
        run.reason[i] = decision.reason;
      },
      done(i, _backend, cached, ttft) {
        run.cached[i] = cached;
        run.ttft[i] = ttft;
      },
    },
  );
  console.log(`seed ${seed}: p99 ${r.ttftP99Ms.toFixed(1)} ms, hit ${(100 * r.hitRate).toFixed(1)}%, preemptions ${r.preemptions}`);
  writeFileSync(b!, JSON.stringify(run));
} else if (mode === "compare") {
  const m = JSON.parse(readFileSync(a!, "utf8")) as Run;
  const p = JSON.parse(readFileSync(b!, "utf8")) as Run;
  const n = m.ttft.length;
  const q = (xs: number[], f: number) => [...xs].sort((x, y) => x - y)[Math.floor(f * xs.length)]!;
  const cut = q(m.ttft, 0.99);
  const moved = m.backend.filter((x, i) => x !== p.backend[i]).length;
  const slow = (r: Run) => r.ttft.map((t, i) => [t, i] as const).filter(([t]) => t >= cut).map(([, i]) => i);
  const describe = (label: string, r: Run) => {
    const s = slow(r);
    const by = new Map<string, number>();
    for (const i of s) by.set(r.reason[i]!, (by.get(r.reason[i]!) ?? 0) + 1);
    const cachedShare = s.reduce((x, i) => x + r.cached[i]! / r.prompt[i]!, 0) / Math.max(1, s.length);
    const perBackend = new Array(8).fill(0);
    for (const i of s) perBackend[r.backend[i]!]++;
    const mean = s.reduce((x, i) => x + r.ttft[i]!, 0) / Math.max(1, s.length);
    console.log(
      `| ${label} | ${q(r.ttft, 0.99).toFixed(1)} ms | ${s.length} | ${mean.toFixed(0)} ms | ${[...by].map(([k, v]) => `${k} ${v}`).join(", ")} | ${(100 * cachedShare).toFixed(0)}% | ${perBackend.join(" / ")} |`,
    );
  };
  console.log(`requests ${n}; placed elsewhere by the patch: ${moved} (${((100 * moved) / n).toFixed(1)}%); main's p99 = ${cut.toFixed(1)} ms`);
  console.log("| run | p99 | requests ≥ main's p99 | their mean TTFT | by reason | their cached share | per backend |");
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  describe("main", m);
  describe("patch", p);
  // Of the patch's requests at or past main's p99: where main had put them, and how slow they were there.
  const ps = slow(p);
  const same = ps.filter((i) => p.backend[i] === m.backend[i]).length;
  const wasSlow = ps.filter((i) => m.ttft[i]! >= cut).length;
  console.log(
    `patch's ${ps.length} at or past main's p99: ${same} on main's backend, ${ps.length - same} moved; ${wasSlow} were that slow in main too`,
  );
}
