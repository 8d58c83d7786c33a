/**
 * The e2e replay's requests through the real Worker and RouterDO to real
 * emulators: the router is told max_tokens as the replay's client sent it
 * (or nothing), never the answer's true length, which reaches the emulator
 * as `min_tokens`, a field the gateway passes through unread. A thin wrapper
 * around the ROUTER namespace (interceptRoute) records what each route() call was given.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { replayBody } from "../../bench/e2e/request-body";
import type { RouteInput } from "../../src/worker/router/router-rpc";
import { authHeaders, gatewayWithEnv, interceptRoute, longPrompt, MODEL } from "./helpers";

const seen: RouteInput[] = [];

/** The real ROUTER namespace; route() calls are recorded, then passed on. */
const recordingRouter = (): Env["ROUTER"] =>
  interceptRoute((input, real) => {
    seen.push(input);
    return real(input);
  });

/** Sends one replay body; returns what the router was told and how many tokens the answer had. */
async function replay(seed: string, outputTokens: number, maxTokens: number | undefined) {
  seen.length = 0;
  const body = replayBody({
    model: MODEL,
    messages: [
      { role: "system", content: longPrompt(seed) },
      { role: "user", content: "q" },
    ],
    outputTokens,
    maxTokens,
  });
  const res = await gatewayWithEnv({ ROUTER: recordingRouter() }, "/v1/chat/completions", {
    method: "POST",
    headers: authHeaders(),
    body,
  });
  expect(res.status).toBe(200);
  const events = (await res.text())
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)) as { usage?: { completion_tokens: number } });
  const usage = events.find((e) => e.usage !== undefined)?.usage;
  expect(seen).toHaveLength(1);
  return { routedWith: seen[0]!.outputTokens, completionTokens: usage?.completion_tokens };
}

describe("the e2e replay's output hint through the gateway", () => {
  // One request first, so that this isolate and the pool's RouterDO agree that the object knows its fleet: the
  // workers files share one workerd, whose Durable Objects are reset before each file (fresh-state.ts) while the
  // isolate remembers an earlier file's pool, so its first route call there is made again with the pool's spec.
  beforeAll(async () => {
    const warm = await gatewayWithEnv({}, "/v1/chat/completions", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ model: MODEL, max_tokens: 1, messages: [{ role: "user", content: "warm" }] }),
    });
    expect(warm.status).toBe(200);
  });

  it("routes on the client's max_tokens while the emulator generates the true length", async () => {
    const r = await replay("hint-cap", 37, 512);
    expect(r.routedWith).toBe(512);
    expect(r.completionTokens).toBe(37);
  });

  it("routes with no output hint when the client sends no max_tokens", async () => {
    const r = await replay("hint-none", 300, undefined);
    expect(r.routedWith).toBeUndefined();
    // Not the emulator's 256 default for an absent max_tokens: min_tokens ended the answer.
    expect(r.completionTokens).toBe(300);
  });
});
