/**
 * Micro-benchmark of one routing decision.
 *
 * One operation = Router.route(new request) + Router.complete(oldest ticket),
 * so 64 requests stay in flight. Fleet: 16 backends × 1,000,000 KV tokens
 * (62,500 blocks each: 1 M blocks in the index when warm). Requests: 8192-token
 * prefixes (512 blocks of 16): one of 64 shared system prompts (2048 tokens,
 * Zipf-skewed) + a conversation whose history grows 512 tokens a turn, over
 * 4,000 live conversations; so matches range from nothing to ~8k tokens and
 * the index evicts. Block keys are computed outside the timed region.
 *
 * The figure that matters: median µs per decision at 16 backends (target
 * well under 50 µs; a Worker→DO round trip is ~500 µs). Also printed: p99,
 * and the index's bytes per block.
 *
 *   npm run bench:micro:routing
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Router, type RouteTicket } from "../../src/routing/router";
import { seededRandom } from "../../src/routing/seeded-random";
import { POLICY_NAMES, type PolicyName } from "../../src/routing/types";
import { summarize } from "../latency-summary";
import {
  BACKENDS,
  CONVERSATIONS,
  fleet,
  INFLIGHT,
  MAX_TURNS,
  MEASURED_OPS,
  SYSTEM_PROMPTS,
  TURN_BLOCKS,
  WARM_OPS,
  workload,
} from "./routing-workload";

interface Result {
  readonly policy: PolicyName;
  readonly stride: number;
  readonly medianUs: number;
  readonly p99Us: number;
  readonly meanUs: number;
  readonly cpuUs: number;
  readonly expectedHit: number;
  readonly bytesPerBlock: number;
  readonly indexBlocks: number;
  readonly indexMB: number;
}

function run(policy: PolicyName, stride = 1): Result {
  const random = seededRandom(2026);
  const next = workload(random);
  const router = new Router(fleet, { policy, indexStride: stride });
  const open: RouteTicket[] = [];
  const times = new Float64Array(MEASURED_OPS);
  let now = 0;
  let expected = 0;
  let prompt = 0;
  let cpuUs = 0;
  for (let op = 0; op < WARM_OPS + MEASURED_OPS; op++) {
    const req = next();
    now += 1;
    const ctx = { now, random };
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const { decision, ticket } = router.route(req, ctx);
    open.push(ticket);
    if (open.length > INFLIGHT) {
      const done = open.shift()!;
      router.complete(done, { ok: true, cachedTokens: done.decision.expectedCachedTokens, ttftMs: 80 }, ctx);
    }
    const t1 = process.hrtime.bigint();
    const c1 = process.cpuUsage(c0);
    if (op >= WARM_OPS) {
      times[op - WARM_OPS] = Number(t1 - t0) / 1000;
      cpuUs += c1.user + c1.system;
      expected += decision.expectedCachedTokens;
      prompt += req.promptTokens;
    }
  }
  const summary = summarize(Array.from(times));
  const stats = router.stats();
  return {
    policy,
    stride,
    medianUs: summary.p50,
    p99Us: summary.p99,
    meanUs: summary.mean,
    cpuUs: cpuUs / MEASURED_OPS,
    expectedHit: expected / prompt,
    bytesPerBlock: stats.indexBytes / stats.indexBlocks,
    indexBlocks: stats.indexBlocks,
    indexMB: stats.indexBytes / 2 ** 20,
  };
}

const load = loadavg()[0]!;
const started = performance.now();
const results = [...POLICY_NAMES.map((p) => run(p)), run("prefix_aware", 4), run("consistent_hash", 4)];
const seconds = (performance.now() - started) / 1000;

const rows = results.map(
  (r) =>
    `| ${r.policy} | ${r.stride} | ${r.medianUs.toFixed(1)} | ${r.p99Us.toFixed(1)} | ${r.meanUs.toFixed(1)} | ${r.cpuUs.toFixed(1)} | ${(100 * r.expectedHit).toFixed(1)}% | ${r.indexBlocks.toLocaleString("en-US")} | ${r.indexMB.toFixed(1)} | ${r.bytesPerBlock.toFixed(1)} |`,
);
const table = [
  "| policy | index stride | median µs | p99 µs | mean µs | CPU µs/op | expected hit | index blocks | index MB | bytes/block |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...rows,
].join("\n");
console.log(table);
console.log(`(${seconds.toFixed(1)} s)`);

const report = `# Routing decision micro-benchmark

Command: \`npm run bench:micro:routing\` (Node ${process.version}, ${process.arch}; a shared 2-core
machine with other jobs running, 1-minute load average ${load.toFixed(1)} at the start: treat the figures as upper
bounds; "CPU µs/op" is process CPU time, less sensitive to that contention than wall time).

One operation = \`Router.route\` of a new request + \`Router.complete\` of the oldest ticket (64 in flight).
${BACKENDS} backends × 1,000,000 KV tokens (62,500 blocks each, 1 M blocks when warm); every request is an
8192-token prefix (512 blocks of 16): one of ${SYSTEM_PROMPTS} Zipf-skewed 2048-token system prompts + a
conversation history growing ${TURN_BLOCKS * 16} tokens a turn (${CONVERSATIONS} live conversations,
${MAX_TURNS} turns each). ${WARM_OPS.toLocaleString("en-US")} warm-up operations, then
${MEASURED_OPS.toLocaleString("en-US")} measured; block keys are computed outside the timed region.
"Expected hit" is the index's own belief (decision.expectedCachedTokens / prompt tokens), not a measured
hit rate: that is the simulator's job.

${table}

Every policy pays for the index update (512 block touches on the chosen backend) and the longest-prefix
lookups (binary search, ≤ 10 probes per backend); prefix_aware adds the cost model over 16 backends.
The index update dominates and is bound by memory latency (34 MB of index at stride 1 does not stay in
cache). \`indexStride: 4\` (RouterOptions) keeps every 4th block key only: matches resolve to 64 tokens
instead of 16, the index needs 9 bytes per block instead of ~36, and a decision costs a fraction; on this
workload the index's expected hit is unchanged, because its prefixes end on 64-token boundaries (real
prompts lose < 64 tokens of expected match per request). **The Router's default is one index key every 64
tokens** (stride 4 at 16-token blocks, 1 at 64-token blocks or more), used alike by the RouterDO and the
simulator; the stride-1 rows above are for comparison (set \`indexStride: 1\` to get them).
`;
const out = join(dirname(fileURLToPath(import.meta.url)), "..", "results", "micro-routing.md");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, report);
console.log(`wrote ${out}`);
