// @ts-nocheck -- runs on branch mt-tail only (PrefixAwareOptions.holdAmongHolders)
// One run, prefix_aware as main has it against the branch's holdAmongHolders, at each tie tolerance of TIES
// (ms; default "1"): one JSON line per (variant, tie) with p50, p99, hit and preemptions. No probes: the race's run.
//   REQUESTS=10000 TIES="0.8 1 1.2" npx tsx bench/results/mtt-audit/pair.ts multi-turn 8 45 tuning 1 qwen3-30b-a3b-h100-vllm
import { readingsOf, viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { loadAuditRunFromArgv } from "../audit-run";

const run = await loadAuditRunFromArgv({
  spec: "multi-turn",
  backends: 8,
  load: 45,
  set: "tuning",
  seed: 1,
  preset: "qwen3-30b-a3b-h100-vllm",
});
const { w, fleet } = run;
const ties = (process.env.TIES ?? "1").split(/\s+/).filter(Boolean).map(Number);
for (const tie of ties)
  for (const holdAmongHolders of [false, true]) {
    const r = simulatePolicy(
      w,
      fleet,
      "prefix_aware",
      (specs, readings) =>
        new Router(specs, {
          policy: new PrefixAwarePolicy({ tieToleranceMs: tie, holdAmongHolders }),
          blockTokens: w.blockTokens,
          ...readingsOf("prefix_aware", readings),
        }),
      viewOf("prefix_aware"),
    );
    console.log(
      JSON.stringify({
        spec: run.spec,
        backends: run.backends,
        set: run.set,
        seed: run.seed,
        preset: run.preset,
        tie,
        variant: holdAmongHolders ? "branch" : "main",
        p50: r.ttftP50Ms,
        p99: r.ttftP99Ms,
        hit: r.hitRate,
        preemptions: r.preemptions,
      }),
    );
  }
