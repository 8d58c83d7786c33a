/**
 * Fuzz through the real Worker in workerd (exports.default.fetch, real
 * RouterDO, real backend emulators): random and adversarial bodies, each
 * answered with a 2xx or a 4xx in OpenAI's error shape — never a 5xx, never
 * a hang. Fewer and smaller bodies than the Node fuzz (which bounds keying
 * work on megabyte inputs): bodies that pass validation go to a real
 * backend, so they ask it for one or two tokens.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FuzzBody, fuzzBodies } from "../node/fuzz-bodies";
import { authHeaders, gateway, MODEL, settle } from "./helpers";

const SEED = 20261130;
const scale = { maxRun: 20_000, maxArray: 20_000, maxDepth: 5_000, backendSafe: true, model: MODEL };
const PATHS = { chat: "/v1/chat/completions", completions: "/v1/completions" } as const;
/** A request that has not answered by then is a hang. */
const ANSWER_WITHIN_MS = 15_000;

async function send(b: FuzzBody): Promise<number> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${b.label}: no answer within ${ANSWER_WITHIN_MS} ms`)),
      ANSWER_WITHIN_MS,
    );
  });
  try {
    const res = await Promise.race([
      gateway(PATHS[b.kind], { method: "POST", headers: authHeaders(), body: b.bytes }),
      hang,
    ]);
    // Read to the end (a relayed stream must finish too), then check the shape of errors.
    const text = await Promise.race([res.text(), hang]);
    expect(res.status, `${b.label}: ${text.slice(0, 300)}`).toBeGreaterThanOrEqual(200);
    expect(res.status, `${b.label}: ${text.slice(0, 300)}`).toBeLessThan(500);
    if (res.status >= 400) {
      const body = JSON.parse(text) as { error: { code: unknown; message: unknown } };
      expect(typeof body.error.message).toBe("string");
    }
    return res.status;
  } finally {
    clearTimeout(timer);
  }
}

describe("edge fuzz (workerd): the real Worker", () => {
  it("answers every body with a 2xx or a 4xx, never a 5xx, never a hang", async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fuzzBodies(scale), async (b) => {
        const status = await send(b);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }),
      { seed: SEED, numRuns: 60, endOnFailure: true },
    );
    await settle();
    // Both sides were reached: answered by a backend, and refused at the edge.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(5);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(5);
  }, 60_000);
});
