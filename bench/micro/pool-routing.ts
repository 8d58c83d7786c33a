/**
 * Micro-benchmark of what the operator's features add to one routing
 * decision in the RouterDO: the reuse-available figure, the PoolRouter
 * around the Router, the shadow's second decision, an A/B split, and the
 * stats kept per request (PoolStats: counters, two sketches, two histograms).
 *
 * One operation = route a new request + complete the oldest (64 in flight),
 * through each configuration, on routing-workload.ts's workload (16
 * backends, 8k-token prefixes, the default index stride). The figure that
 * matters: CPU µs per operation of each configuration against the bare
 * Router with the same serving policy.
 *
 *   npm run bench:micro:pool-routing     → bench/results/micro-pool-routing.md
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PoolRouter, type PoolTicket } from "../../src/routing/pool-router";
import { Router, type RouteTicket } from "../../src/routing/router";
import { seededRandom } from "../../src/routing/seeded-random";
import type { PolicyName, RouteContext, RouteDecision, RouteRequest } from "../../src/routing/types";
import { PoolStats } from "../../src/worker/stats/pool-stats";
import { summarize } from "../latency-summary";
import { BACKENDS, fleet, INFLIGHT, MEASURED_OPS, WARM_OPS, workload } from "./routing-workload";

/** One configuration: route a request, complete a ticket (with the engine's figures), both timed. */
interface Subject {
  route(
    req: RouteRequest,
    key: number,
    ctx: RouteContext,
  ): { decision: RouteDecision; done: (ctx: RouteContext) => void };
}

function bare(policy: PolicyName): Subject {
  const router = new Router(fleet, { policy });
  return {
    route(req, _key, ctx) {
      const { decision, ticket } = router.route(req, ctx);
      const t: RouteTicket = ticket;
      return {
        decision,
        done: (c) =>
          router.complete(
            t,
            {
              ok: true,
              promptTokens: req.promptTokens,
              cachedTokens: decision.expectedCachedTokens,
              ttftMs: 80,
            },
            c,
          ),
      };
    },
  };
}

function pool(
  policies: readonly [PolicyName] | readonly [PolicyName, PolicyName],
  shadow: boolean,
  stats: boolean,
): Subject {
  const router = new PoolRouter(fleet, {
    arms:
      policies.length === 1 ? [{ policy: policies[0] }] : [{ policy: policies[0] }, { policy: policies[1] }],
    percentB: 50,
    ...(shadow ? { shadow: { policy: "prefix_aware" as const } } : {}),
  });
  const counts = stats ? new PoolStats(policies, shadow ? "prefix_aware" : undefined) : undefined;
  return {
    route(req, key, ctx) {
      const d = router.route(req, key, ctx);
      const figures = counts?.routed(d, req.promptTokens);
      const t: PoolTicket = d.ticket;
      return {
        decision: d.decision,
        done: (c) => {
          const cached = d.decision.expectedCachedTokens;
          router.complete(
            t,
            { ok: true, promptTokens: req.promptTokens, cachedTokens: cached, ttftMs: 80 },
            c,
          );
          if (figures !== undefined)
            counts?.ended(d.arm, figures, {
              ok: true,
              promptTokens: req.promptTokens,
              cachedTokens: cached,
              ttftMs: 80 + (cached % 97),
              durationMs: 900 + (cached % 331),
              outputTokens: 256,
            });
        },
      };
    },
  };
}

function measure(make: () => Subject): { medianUs: number; p99Us: number; cpuUs: number } {
  const random = seededRandom(2026);
  const next = workload(random);
  const subject = make();
  const open: ((ctx: RouteContext) => void)[] = [];
  const times = new Float64Array(MEASURED_OPS);
  let cpuUs = 0;
  for (let op = 0; op < WARM_OPS + MEASURED_OPS; op++) {
    const req = next();
    const ctx = { now: op, random };
    const key = Math.floor(random() * 2 ** 32);
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    open.push(subject.route(req, key, ctx).done);
    if (open.length > INFLIGHT) open.shift()!(ctx);
    const t1 = process.hrtime.bigint();
    const c1 = process.cpuUsage(c0);
    if (op >= WARM_OPS) {
      times[op - WARM_OPS] = Number(t1 - t0) / 1000;
      cpuUs += c1.user + c1.system;
    }
  }
  const s = summarize(Array.from(times));
  return { medianUs: s.p50, p99Us: s.p99, cpuUs: cpuUs / MEASURED_OPS };
}

const CASES: readonly [string, () => Subject][] = [
  ["Router, least_outstanding (bare)", () => bare("least_outstanding")],
  ["PoolRouter, least_outstanding, + stats", () => pool(["least_outstanding"], false, true)],
  ["PoolRouter, least_outstanding, + shadow + stats", () => pool(["least_outstanding"], true, true)],
  ["Router, prefix_aware (bare)", () => bare("prefix_aware")],
  ["PoolRouter, prefix_aware, + stats", () => pool(["prefix_aware"], false, true)],
  [
    "PoolRouter, A/B prefix_aware vs least_outstanding, + shadow + stats",
    () => pool(["prefix_aware", "least_outstanding"], true, true),
  ],
];

const load = loadavg()[0]!;
// Three times, interleaved, keeping each case's best run: the machine is shared.
const results = new Map<string, { medianUs: number; p99Us: number; cpuUs: number }>();
for (let round = 0; round < 3; round++)
  for (const [name, make] of CASES) {
    const r = measure(make);
    const best = results.get(name);
    if (best === undefined || r.cpuUs < best.cpuUs) results.set(name, r);
  }
const rows = CASES.map(([name]) => {
  const r = results.get(name)!;
  return `| ${name} | ${r.medianUs.toFixed(1)} | ${r.p99Us.toFixed(1)} | ${r.cpuUs.toFixed(1)} |`;
});
const table = ["| configuration | median µs | p99 µs | CPU µs/op |", "|---|---:|---:|---:|", ...rows].join(
  "\n",
);
console.log(table);

const report = `# What shadow, A/B arms and stats add to a routing decision

Command: \`npm run bench:micro:pool-routing\` (Node ${process.version}, ${process.arch}; a shared 2-core machine,
1-minute load average ${load.toFixed(1)} at the start; each case run three times, interleaved, the best run kept).

One operation = route a new request + complete the oldest (${INFLIGHT} in flight), on the workload of
\`bench/micro/routing-workload.ts\` (${BACKENDS} backends, 8192-token prefixes, the default index stride of 64 tokens);
${WARM_OPS.toLocaleString("en-US")} warm-up operations, ${MEASURED_OPS.toLocaleString("en-US")} measured. "Bare" is the Router as the RouterDO
used it before (with this branch's reuse-available figure, which it now always computes); "stats" is the
RouterDO's PoolStats (per-arm counters, a DDSketch each for TTFT and end-to-end latency, two histograms);
the shadow is a second, passive Router deciding with prefix_aware.

${table}

The shadow costs about one prefix_aware decision or a little more (its own index update and cost model,
on an index that differs from the serving arm's); the stats cost a few µs (two sketch inserts, two histogram buckets, a handful of counters). An A/B split costs nothing per
request beyond its arm's own decision: each request is decided by one arm.

Before this branch (commit 6545600, the same loop over its bare Router, three runs, best): least_outstanding
28.3 µs, prefix_aware 38.0 µs of CPU per operation; this branch's bare Router: 33.3 and 40.2 µs. The
difference for least_outstanding (~5 µs) is the reuse-available figure: a longest-prefix lookup on every
backend, which prefix_aware already made for its own decision. Run-to-run spread on this machine is
±10 µs, so read these as "a few µs", not to the decimal.
`;
const out = join(dirname(fileURLToPath(import.meta.url)), "..", "results", "micro-pool-routing.md");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, report);
console.log(`wrote ${out}`);
