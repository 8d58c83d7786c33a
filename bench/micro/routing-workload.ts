/**
 * The workload of the routing micro-benchmarks (routing-decision.ts,
 * pool-routing.ts): 16 backends × 1,000,000 KV tokens; 8192-token prefixes
 * (512 blocks of 16): one of 64 Zipf-skewed 2048-token system prompts + a
 * conversation history growing 512 tokens a turn, over 4,000 live
 * conversations of up to 12 turns. Block keys are made here, outside any
 * timed region.
 */
import { blockKeysFromIds, chainSeed } from "../../src/prefix/block-keys";
import type { BackendSpec, RouteRequest } from "../../src/routing/types";

export const BACKENDS = 16;
export const BLOCKS = 512;
export const SYSTEM_BLOCKS = 128;
export const TURN_BLOCKS = 32;
export const SYSTEM_PROMPTS = 64;
export const CONVERSATIONS = 4000;
export const MAX_TURNS = 12;
export const INFLIGHT = 64;
export const WARM_OPS = 6_000;
export const MEASURED_OPS = 4_000;

export const fleet: BackendSpec[] = Array.from({ length: BACKENDS }, (_, i) => ({
  id: `gpu-${i}`,
  weight: 1,
  kvCacheTokens: 1_000_000,
}));
const seed = chainSeed("llama-3.1-70b");

interface Conversation {
  id: number;
  system: number;
  turn: number;
}

/** Workload generator: Zipf(1) over system prompts, uniform over live conversations. */
export function workload(random: () => number): () => RouteRequest {
  const zipf: number[] = [];
  let acc = 0;
  for (let k = 1; k <= SYSTEM_PROMPTS; k++) {
    acc += 1 / k;
    zipf.push(acc);
  }
  const pickSystem = () => {
    const r = random() * acc;
    let k = 0;
    while (zipf[k]! < r) k++;
    return k;
  };
  let nextId = 0;
  const convs: Conversation[] = Array.from({ length: CONVERSATIONS }, () => ({
    id: nextId++,
    system: pickSystem(),
    turn: 0,
  }));
  const ids = new Array<number>(BLOCKS);
  return () => {
    const c = convs[Math.floor(random() * CONVERSATIONS)]!;
    if (c.turn >= MAX_TURNS) {
      c.id = nextId++;
      c.system = pickSystem();
      c.turn = 0;
    }
    const known = SYSTEM_BLOCKS + c.turn * TURN_BLOCKS;
    for (let j = 0; j < BLOCKS; j++) {
      if (j < SYSTEM_BLOCKS) ids[j] = c.system * 10_000 + j;
      else if (j < known)
        ids[j] = 1e8 + c.id * 1000 + j; // history from earlier turns
      else ids[j] = 1e12 + c.id * 100_000 + c.turn * 1000 + j; // this turn's new tokens
    }
    c.turn++;
    return { blocks: blockKeysFromIds(ids, seed), promptTokens: BLOCKS * 16 + 100, outputTokens: 256 };
  };
}
