// The slowest 1% of prefix_aware with the gateway's scrape on (every SCRAPE_MS, default 1000; no second
// client), request by request: its prompt length, and, where the policy has it (src/routing/engine-memory.ts),
// how many decisions the engine reading's memory-blocked queue head moved. Run it from two checkouts (main's
// policy and this branch's) on the same run and compare the two outputs; TTFT_OUT=FILE also writes every
// request's TTFT as JSON.
//   MOONCAKE_TRACE=… npx tsx bench/results/engine-memory/tail.ts mooncake 8 2 tuning 1 qwen3-30b-a3b-h100-vllm
// TIE=ms: the tie tolerance moved (0.9 / 1.1 / 1.2 against 1), a noise gauge as tail-gaps/README.md's;
// SHOW=N rows.
// An audit only: the head wait is counted by wrapping EngineMemory's method, nothing here changes routing.
import { writeFileSync } from "node:fs";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, tieGaugedRouter, withTtft } from "../audit-run";

const { w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const scrapeMs = Number(process.env.SCRAPE_MS ?? 1000);
const n = w.requests.length;
const ttft = new Float64Array(n);
let asked = 0;
let blocked = 0;
/** Per request (arrival order): its backend and the head wait charged to each backend at its decision. */
const chosen = new Int32Array(n).fill(-1);
const waits: Map<number, number>[] = Array.from({ length: n }, () => new Map());
const readingAt: (string | undefined)[][] = Array.from({ length: n }, () => []);
let current = -1;
// Absent in a checkout without the term (main's policy): the audit then only lists the tail.
const memory: unknown = await import("../../../src/routing/engine-memory").catch(() => ({}));
const proto = (memory as { EngineMemory?: { prototype: { headWaitMs: (...a: unknown[]) => number } } })
  .EngineMemory?.prototype;
if (proto !== undefined) {
  const headWaitMs = proto.headWaitMs;
  proto.headWaitMs = function (this: unknown, ...a: unknown[]) {
    const ms = headWaitMs.apply(this, a);
    asked++;
    if (ms > 0) blocked++;
    const [r, i, , , now] = a as [{ waiting: number; kvUsage: number; sampledAt: number } | undefined, number, number, unknown, number];
    if (current >= 0) {
      waits[current]!.set(i, ms);
      readingAt[current]![i] =
        r === undefined ? undefined : `w${r.waiting} kv${(r.kvUsage * 100).toFixed(0)}% age${(now - r.sampledAt).toFixed(0)}`;
    }
    return ms;
  };
}
const r = simulatePolicy(
  w,
  { ...fleet, scrapeMs },
  "prefix_aware",
  withTtft((specs, readings) => {
    const router = tieGaugedRouter(w.blockTokens, scrapeMs)(specs, readings);
    let k = 0;
    return {
      ...router,
      route(req, ctx) {
        current = k++;
        const out = router.route(req, ctx);
        chosen[current] = specs.findIndex((b) => b.id === out.decision.backendId);
        return out;
      },
      ...(router.firstToken ? { firstToken: router.firstToken.bind(router) } : {}),
      complete: router.complete.bind(router),
    };
  }, ttft),
  viewOf("prefix_aware"),
);
const order = [...ttft.keys()].sort((a, b) => ttft[b]! - ttft[a]!);
const tail = order.slice(0, Math.ceil(n / 100));
const prompt = (i: number) => w.requests[i]!.promptTokens;
console.log(`prefix_aware, scrape ${scrapeMs} ms: p50 ${r.ttftP50Ms.toFixed(0)} ms, p99 ${r.ttftP99Ms.toFixed(0)} ms`);
console.log(
  proto === undefined
    ? "this checkout has no engine-memory term"
    : `head-of-line wait: ${blocked} of ${asked} backend costs (${((100 * blocked) / Math.max(1, asked)).toFixed(2)}%)`,
);
console.log(
  `slowest 1% (${tail.length}, TTFT ≥ ${(ttft[tail[tail.length - 1]!]! / 1000).toFixed(2)} s): prompts < 32k tokens ${tail.filter((i) => prompt(i) < 32768).length}, ≥ 65k ${tail.filter((i) => prompt(i) >= 65536).length}`,
);
for (const i of tail.slice(0, Number(process.env.SHOW ?? 20)))
  console.log(
    `  #${i} prompt ${prompt(i)} TTFT ${(ttft[i]! / 1000).toFixed(2)} s on ${chosen[i]}` +
      (proto === undefined
        ? ""
        : `; head wait there ${(waits[i]!.get(chosen[i]!) ?? Number.NaN).toFixed(0)} ms (${readingAt[i]![chosen[i]!] ?? "no reading"}), elsewhere [${[
            ...waits[i]!,
          ]
            .filter(([b]) => b !== chosen[i])
            .map(([b, ms]) => `${b}:${ms.toFixed(0)}`)
            .join(" ")}]`),
  );
if (process.env.TTFT_OUT) writeFileSync(process.env.TTFT_OUT, JSON.stringify([...ttft]));
