/**
 * Conformance with a client nobody here wrote: the official `openai` SDK
 * makes the same calls against the gateway (wrangler dev, local workerd) and
 * against a backend emulator directly; the answers must be the same.
 *
 * Two fresh emulators with one config: A sits behind the gateway, B is
 * called directly. Both see the same calls in the same order, so their KV
 * caches (and so usage.cached_tokens) evolve identically, and the emulator's
 * text is a function of the request — any difference is the gateway's doing.
 */
import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleWorker, type Gateway, startGateway, type WorkerBundle } from "../../bench/e2e/gateway";
import { startEmulator } from "../../bench/emulator/server";

const MODEL = "conformance-model";
const EMU_KEY = "conformance-emulator-key";
const GW_KEY = "conformance-gateway-key";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

let emuA: Emulator | undefined;
let emuB: Emulator | undefined;
let gateway: Gateway | undefined;
let bundle: WorkerBundle | undefined;
let viaGateway: OpenAI;
let direct: OpenAI;

beforeAll(async () => {
  // Fast emulators: the SDK's behaviour, not the model's timing, is under test.
  emuA = await startEmulator({ port: 0, host: "127.0.0.1", model: MODEL, apiKey: EMU_KEY, speed: 50 });
  emuB = await startEmulator({ port: 0, host: "127.0.0.1", model: MODEL, apiKey: EMU_KEY, speed: 50 });
  // A frozen bundle: wrangler dev on the checkout would reload on every save made meanwhile.
  bundle = await bundleWorker();
  gateway = await startGateway({
    configPath: bundle.configPath,
    backends: [
      { id: "emu-a", url: emuA.url, models: [MODEL], apiKey: EMU_KEY, weight: 1, kvCacheTokens: 442_368 },
    ],
    policy: "prefix_aware",
    apiKey: GW_KEY,
    readyTimeoutMs: 45_000,
  });
  viaGateway = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: GW_KEY, maxRetries: 0, timeout: 20_000 });
  direct = new OpenAI({ baseURL: `${emuB.url}/v1`, apiKey: EMU_KEY, maxRetries: 0, timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.allSettled([emuA?.close(), emuB?.close(), bundle?.dispose()]);
}, 30_000);

/** Runs the same call both ways, gateway first (order matters for the caches: keep it fixed). */
async function both<T>(call: (client: OpenAI) => Promise<T>): Promise<[T, T]> {
  const g = await call(viaGateway);
  const d = await call(direct);
  return [g, d];
}

/** The parts of a response that must match: everything but ids and timestamps. */
function comparable(r: OpenAI.Chat.ChatCompletion | OpenAI.Completion): unknown {
  const { id: _id, created: _created, system_fingerprint: _fp, ...rest } = r as OpenAI.Chat.ChatCompletion;
  return rest;
}

const SYSTEM = "You are a terse assistant. Answer in one short paragraph about harbors, tides and ships.";
const messages = (q: string): OpenAI.Chat.ChatCompletionMessageParam[] => [
  { role: "system", content: SYSTEM },
  { role: "user", content: q },
];

/**
 * Status and error type: what the SDK's callers branch on. `code` is compared
 * only where the backend produced the error: for a request the gateway
 * rejects itself its validator names the rule ("invalid_value") where a
 * vLLM-like server sends null — both valid OpenAI error shapes, and a bad
 * request must not be forwarded.
 */
async function errorOf(
  p: Promise<unknown>,
): Promise<{ status: number | undefined; type: unknown; code: unknown }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(APIError);
    const e = err as APIError;
    return { status: e.status, type: e.type, code: e.code };
  }
  throw new Error("expected the call to fail");
}

describe("openai SDK: gateway ≡ emulator", () => {
  it("chat, non-streaming", async () => {
    const [g, d] = await both((c) =>
      c.chat.completions.create({ model: MODEL, messages: messages("What is a tide?"), max_tokens: 24 }),
    );
    expect(g.choices[0]?.message.content?.length).toBeGreaterThan(0);
    expect(g.usage?.completion_tokens).toBe(24);
    expect(comparable(g)).toEqual(comparable(d));
  });

  it("chat, streaming with include_usage", async () => {
    const [g, d] = await both(async (c) => {
      const stream = await c.chat.completions.create({
        model: MODEL,
        messages: messages("What is a harbor?"),
        max_tokens: 20,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      let finish: string | null | undefined;
      let usage: OpenAI.CompletionUsage | null | undefined;
      let usageChunks = 0;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? "";
        finish ??= chunk.choices[0]?.finish_reason;
        if (chunk.usage) {
          usageChunks++;
          usage = chunk.usage;
          // OpenAI's contract: the usage chunk comes last, with no choices.
          expect(chunk.choices).toEqual([]);
        }
      }
      return { text, finish, usage, usageChunks };
    });
    expect(g.text.length).toBeGreaterThan(0);
    expect(g.usageChunks).toBe(1);
    expect(g.usage?.completion_tokens).toBe(20);
    expect(g).toEqual(d);
  });

  it("completions, non-streaming and streaming", async () => {
    const [g, d] = await both((c) =>
      c.completions.create({ model: MODEL, prompt: "Ships and tides: a short note.", max_tokens: 16 }),
    );
    expect(g.choices[0]?.text.length).toBeGreaterThan(0);
    expect(comparable(g)).toEqual(comparable(d));

    const [gs, ds] = await both(async (c) => {
      const stream = await c.completions.create({
        model: MODEL,
        prompt: "Ships and tides: another note.",
        max_tokens: 12,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      let usage: OpenAI.CompletionUsage | null | undefined;
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.text ?? "";
        finish ??= chunk.choices[0]?.finish_reason;
        if (chunk.usage) usage = chunk.usage;
      }
      return { text, usage, finish };
    });
    expect(gs.usage?.completion_tokens).toBe(12);
    expect(gs).toEqual(ds);
  });

  it("n > 1", async () => {
    const [g, d] = await both((c) =>
      c.chat.completions.create({ model: MODEL, messages: messages("Name a ship."), max_tokens: 8, n: 2 }),
    );
    expect(g.choices.map((x) => x.index)).toEqual([0, 1]);
    expect(comparable(g)).toEqual(comparable(d));
  });

  it("stop sequences", async () => {
    const q = messages("Describe the tide tables.");
    const [full] = await both((c) =>
      c.chat.completions.create({ model: MODEL, messages: q, max_tokens: 32 }),
    );
    const words = (full.choices[0]?.message.content ?? "").trim().split(/\s+/);
    expect(words.length).toBeGreaterThan(4);
    const stop = words[3]!;
    const [g, d] = await both((c) =>
      c.chat.completions.create({ model: MODEL, messages: q, max_tokens: 32, stop: [stop] }),
    );
    expect(g.choices[0]?.finish_reason).toBe("stop");
    expect(g.choices[0]?.message.content).not.toContain(stop);
    expect(comparable(g)).toEqual(comparable(d));
  });

  it("errors: unknown model, bad request", async () => {
    const [gm, dm] = await both((c) =>
      errorOf(c.chat.completions.create({ model: "no-such-model", messages: messages("hi"), max_tokens: 4 })),
    );
    expect(gm.status).toBe(404);
    expect(gm).toEqual(dm);
    const [gb, db] = await both((c) =>
      errorOf(
        c.chat.completions.create({
          model: MODEL,
          messages: messages("hi"),
          max_tokens: -3,
        }),
      ),
    );
    expect(gb.status).toBe(400);
    expect({ status: gb.status, type: gb.type }).toEqual({ status: db.status, type: db.type });
  });

  it("a stream the backend cuts mid-way reaches the SDK as an APIError, not a silent end", async () => {
    const marker = "conformance-cut-marker";
    emuA!.setFault({ kind: "cut", afterChunks: 3, match: marker });
    try {
      const stream = await viaGateway.chat.completions.create({
        model: MODEL,
        messages: messages(`Tell me about ${marker}.`),
        max_tokens: 64,
        stream: true,
      });
      const seen: string[] = [];
      const err = await (async () => {
        try {
          for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? "");
          return undefined;
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).code).toBe("upstream_stream_error");
      expect(seen.join("")).not.toBe("");
    } finally {
      emuA!.setFault(null);
    }
  });
});
