/**
 * A prompt padded with ~1 MB of spaces past the key window, counted just under the pool's largest KV
 * (262,144): through the real Worker and RouterDO against real emulators, it must not cost the other
 * clients' prefixes their place in its backend's affinity index (red-team.md, branch index-wipe, left
 * alone 1). The Worker says which part of its count is runs of one character (src/prefix/run-excess.ts);
 * the RouterDO evicts for that part only as far as the engine's usage.prompt_tokens confirms (~8,000 here).
 */
import { describe, expect, it } from "vitest";
import {
  authHeaders,
  backendRow,
  gatewayWithEnv,
  longPrompt,
  poolStats,
  SPARE_MODEL,
  settle,
  spareUrls,
} from "./helpers";

/** Two spare emulators, a 1,024-token key window (as estimate-bound.test.ts). */
function pool(): { BACKENDS: string; PREFIX_TOKENS: string } {
  const [a, b] = spareUrls();
  return {
    BACKENDS: JSON.stringify([backendRow("iw-1", a!, [SPARE_MODEL]), backendRow("iw-2", b!, [SPARE_MODEL])]),
    PREFIX_TOKENS: "1024",
  };
}

async function send(messages: unknown[]): Promise<string> {
  const res = await gatewayWithEnv(pool(), "/v1/chat/completions", {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: SPARE_MODEL, max_tokens: 4, messages }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.headers.get("x-prefix-gateway-backend")!;
}

const keyedOn = async () =>
  Object.fromEntries((await poolStats(SPARE_MODEL)).router.backends.map((b) => [b.id, b.indexBlocks]));

describe("a prompt padded with spaces, counted just under the largest KV", () => {
  it("leaves the other clients' prefixes in its backend's affinity index", async () => {
    for (let f = 0; f < 16; f++)
      await send([
        { role: "system", content: longPrompt(`wipe-family${f}`, 300) },
        { role: "user", content: "go on" },
      ]);
    await settle(SPARE_MODEL);
    const before = await keyedOn();
    // ~1,024 keyed tokens of prose, then 1,000,000 spaces: counted ~251,000 (within 262,144), ~8,800 to o200k.
    const on = await send([
      { role: "user", content: `${longPrompt("wipe-padded", 300)}${" ".repeat(1_000_000)}` },
    ]);
    await settle(SPARE_MODEL);
    const after = await keyedOn();
    // Before the fix: its backend kept only its own 64 keyed blocks (every family there evicted at route).
    expect(after[on]).toBeGreaterThanOrEqual(before[on]!);
  });
});
