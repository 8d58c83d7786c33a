// The crunch gauge (tight-copy): admission-view/gauge.ts's run with the tie tolerance moved (a perturbation of no
// meaning), printing beside p99 the run's hit, engine preemptions and prefill GPU-seconds: whether a change does
// what it says in multi-turn MoE seed 2's memory crunch, apart from that run's chaotic p99. Run it from each tree
// (copy it into a detached worktree of main for main's policy); gauge-wide-crunch.sh runs the eleven tolerances.
//   REQUESTS=10000 TIE=1 npx tsx bench/results/tight-copy/crunch-gauge.ts multi-turn 8 45 tuning 2 qwen3-30b-a3b-h100-vllm
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, simulateAtTie } from "../audit-run";

const { w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const { tie, r } = simulateAtTie(w, fleet);
console.log(`tie ${tie} ms: p99 ${r.ttftP99Ms.toFixed(0)} ms, hit ${(100 * r.hitRate).toFixed(2)}%, preemptions ${r.preemptions}, prefill GPU-s ${r.prefillGpuSeconds.toFixed(1)}`);
