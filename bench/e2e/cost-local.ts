/**
 * Gateway cost, the parts that are pure computation, measured call by call
 * under Node on the very modules the Worker and the RouterDO run
 * (src/prefix, src/routing): same source, same V8 engine as workerd.
 *
 * Why not inside workerd: the local runtime's performance.now() ticks in
 * whole milliseconds (measured: a loop timed in-Worker reads 252, 261, 270 —
 * integers), so sub-millisecond medians cannot be taken there; it only
 * yields batch means. The whole-process CPU per request inside workerd is
 * measured separately (cost-gateway.ts, from /proc), which bounds these
 * figures from above.
 */
import { clearPrefixMemo, prefixKeysForRequest } from "../../src/prefix/request-keys";
import { Router } from "../../src/routing/index";
import type { BackendSpec, PolicyName, RouteContext } from "../../src/routing/types";
import { type Summary, summarize } from "../latency-summary";
import { corpusText, corpusTokens } from "./corpus";

export interface PrefixCostRow {
  readonly promptTokens: number;
  readonly systemPrompt: "seen" | "unseen";
  /** Per call, wall ms. */
  readonly ms: Summary;
  /** Per call, process CPU ms (process.cpuUsage): what the call costs when the machine is shared. */
  readonly cpuMs: Summary;
  readonly blocks: number;
}

const QUESTION_TOKENS = 128;

/**
 * prefixKeysForRequest for a chat body of a system prompt (promptTokens − 128)
 * and a 128-token question. "seen": the same system prompt every call (the
 * isolate memo holds it after the first), a fresh question each time.
 * "unseen": a different system prompt every call.
 */
export function prefixKeysCost(
  projectDir: string,
  sizes: readonly number[],
  iterations: number,
): PrefixCostRow[] {
  const corpus = corpusTokens(projectDir);
  const rows: PrefixCostRow[] = [];
  const opts = { model: "llama-3.1-8b-instruct", blockTokens: 16, prefixTokens: 8192 };
  for (const size of sizes) {
    const sysTokens = size - QUESTION_TOKENS;
    for (const mode of ["seen", "unseen"] as const) {
      clearPrefixMemo();
      // Texts are built before timing; only the gateway's work is timed.
      const bodies = Array.from({ length: iterations + 1 }, (_, i) => ({
        messages: [
          { role: "system", content: corpusText(corpus, mode === "seen" ? 0 : 7919 * (i + 1), sysTokens) },
          { role: "user", content: corpusText(corpus, 104_729 * (i + 1) + 31, QUESTION_TOKENS) },
        ],
      }));
      // First call: warms the tokenizer (and, for "seen", the memo); not counted.
      prefixKeysForRequest("chat", bodies[0]!, opts);
      const ms: number[] = [];
      const cpu: number[] = [];
      let blocks = 0;
      for (let i = 1; i <= iterations; i++) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        blocks = prefixKeysForRequest("chat", bodies[i]!, opts).blocks.length;
        ms.push(performance.now() - t0);
        const c = process.cpuUsage(c0);
        cpu.push((c.user + c.system) / 1000);
      }
      rows.push({ promptTokens: size, systemPrompt: mode, ms: summarize(ms), cpuMs: summarize(cpu), blocks });
    }
  }
  return rows;
}

export interface RouterCostRow {
  readonly backends: number;
  readonly policy: string;
  /** route + complete of one request, wall ms. */
  readonly ms: Summary;
  /** The same, process CPU ms. */
  readonly cpuMs: Summary;
}

/**
 * Router.route + Router.complete at N backends (what RouterDO.route and
 * .complete run besides a UUID and an in-memory alarm check), steady state:
 * 8k-token prompts (512 blocks) from 256 system prompts × many questions,
 * 64 requests kept in flight, each completed with reported cached tokens.
 */
export function routerCost(
  backendCounts: readonly number[],
  policies: readonly PolicyName[],
  iterations: number,
): RouterCostRow[] {
  const rows: RouterCostRow[] = [];
  let seed = 0x2545f491;
  const random = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 4294967296;
  };
  const blocksFor = (group: number, q: number): number[] => {
    const out: number[] = new Array(512);
    for (let b = 0; b < 512; b++) out[b] = b < 480 ? group * 1_000_003 + b : (group * 7919 + q) * 1009 + b;
    return out;
  };
  for (const n of backendCounts) {
    for (const policy of policies) {
      const specs: BackendSpec[] = Array.from({ length: n }, (_, i) => ({
        id: `b${i}`,
        weight: 1,
        kvCacheTokens: 442_368,
      }));
      const router = new Router(specs, { policy, blockTokens: 16 });
      let now = 0;
      const ctx = (): RouteContext => {
        now += 2;
        return { now, random };
      };
      const inflight: ReturnType<Router["route"]>["ticket"][] = [];
      const ms: number[] = [];
      const cpu: number[] = [];
      const total = iterations + 2000;
      for (let i = 0; i < total; i++) {
        const blocks = blocksFor(Math.floor(random() * 256), i);
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const { ticket } = router.route({ blocks, promptTokens: 8192, outputTokens: 256 }, ctx());
        inflight.push(ticket);
        if (inflight.length > 64) {
          const done = inflight.shift()!;
          router.complete(done, { ok: true, promptTokens: 8192, cachedTokens: 7680, ttftMs: 40 }, ctx());
        }
        const dt = performance.now() - t0;
        const c = process.cpuUsage(c0);
        // The first 2000 fill the indexes and let V8 optimise; not counted.
        if (i >= 2000) {
          ms.push(dt);
          cpu.push((c.user + c.system) / 1000);
        }
      }
      rows.push({ backends: n, policy, ms: summarize(ms), cpuMs: summarize(cpu) });
    }
  }
  return rows;
}
