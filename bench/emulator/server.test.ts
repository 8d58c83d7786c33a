import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emulatorTokenizer } from "./prompt-tokens";
import { type Emulator, startEmulator } from "./server";

const MODEL = "llama-3.1-8b-instruct";
const KEY = "emu-key";
let emu: Emulator;
/** A slow one (real time, 25 ms decode steps) to observe token pacing. */
let slow: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, model: MODEL, apiKey: KEY, speed: 50 });
  slow = await startEmulator({ port: 0, model: MODEL, speed: 1, engine: { decodeStepBaseMs: 25 } });
}, 60_000);

afterAll(async () => {
  await emu?.close();
  await slow?.close();
});

function post(path: string, body: unknown, key: string | null = KEY, target = emu): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  return fetch(target.url + path, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

interface Sse {
  chunks: Record<string, unknown>[];
  done: boolean;
  /** Arrival time (ms since request) of each chunk. */
  times: number[];
}

async function readSse(res: Response): Promise<Sse> {
  const t0 = performance.now();
  const out: Sse = { chunks: [], done: false, times: [] };
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
      const event = buf.slice(0, i);
      buf = buf.slice(i + 2);
      expect(event.startsWith("data: ")).toBe(true);
      const data = event.slice(6);
      if (data === "[DONE]") out.done = true;
      else {
        out.chunks.push(JSON.parse(data) as Record<string, unknown>);
        out.times.push(performance.now() - t0);
      }
    }
  }
  return out;
}

const system = "You are a careful assistant. Answer in plain words. ".repeat(40);
const chat = (user: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: MODEL,
  messages: [
    { role: "system", content: system },
    { role: "user", content: user },
  ],
  max_tokens: 12,
  ...extra,
});

type Choice = { index: number; message?: { content: string }; text?: string; finish_reason: string };
type Usage = {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
};

describe("emulator: chat completions", () => {
  it("answers non-streaming with usage and cached_tokens, and serves a repeated prompt from cache", async () => {
    const a = await post("/v1/chat/completions", chat("first question"));
    expect(a.status).toBe(200);
    const ja = (await a.json()) as { object: string; choices: Choice[]; usage: Usage };
    expect(ja.object).toBe("chat.completion");
    expect(ja.choices).toHaveLength(1);
    expect(ja.choices[0]!.finish_reason).toBe("length");
    expect(ja.choices[0]!.message!.content.split(" ")).toHaveLength(12);
    expect(ja.usage.completion_tokens).toBe(12);
    expect(ja.usage.prompt_tokens).toBeGreaterThan(400);
    expect(ja.usage.total_tokens).toBe(ja.usage.prompt_tokens + 12);
    expect(ja.usage.prompt_tokens_details.cached_tokens).toBe(0);

    // Same system prompt, different question: the shared full blocks are hits.
    const b = (await (await post("/v1/chat/completions", chat("second question"))).json()) as {
      usage: Usage;
    };
    const cached = b.usage.prompt_tokens_details.cached_tokens;
    expect(cached).toBeGreaterThan(0);
    expect(cached % 16).toBe(0);
    expect(cached).toBeLessThan(b.usage.prompt_tokens);
    expect(cached).toBeGreaterThan(b.usage.prompt_tokens - 40);
  });

  it("is deterministic in (prompt, seed) and varies with the seed", async () => {
    const text = async (seed: number): Promise<string> =>
      ((await (await post("/v1/chat/completions", chat("det", { seed }))).json()) as { choices: Choice[] })
        .choices[0]!.message!.content;
    const a = await text(1);
    expect(await text(1)).toBe(a);
    expect(await text(2)).not.toBe(a);
  });

  it("isolates caches by cache_salt", async () => {
    await post("/v1/chat/completions", chat("salted", { cache_salt: "tenant-a" }));
    const other = (await (
      await post("/v1/chat/completions", chat("salted", { cache_salt: "tenant-b" }))
    ).json()) as { usage: Usage };
    expect(other.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const same = (await (
      await post("/v1/chat/completions", chat("salted", { cache_salt: "tenant-a" }))
    ).json()) as { usage: Usage };
    expect(same.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  it("streams SSE chunks: role first, then tokens, a finish chunk, usage with empty choices, [DONE]", async () => {
    const res = await post(
      "/v1/chat/completions",
      chat("stream me", { stream: true, stream_options: { include_usage: true } }),
    );
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const sse = await readSse(res);
    expect(sse.done).toBe(true);
    const choices = sse.chunks.map(
      (c) => (c.choices as { delta: Record<string, string>; finish_reason: string }[])[0],
    );
    expect(sse.chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(choices[0]!.delta.role).toBe("assistant");
    const content = choices.slice(1, -2).map((c) => c!.delta.content);
    expect(content).toHaveLength(12);
    expect(choices.at(-2)!.finish_reason).toBe("length");
    const last = sse.chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    const u = last.usage as Usage;
    expect(u.completion_tokens).toBe(12);
    expect(u.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  it("paces streamed tokens over time instead of sending them at once", async () => {
    const res = await post(
      "/v1/chat/completions",
      chat("pace", { stream: true, max_tokens: 10 }),
      null,
      slow,
    );
    const sse = await readSse(res);
    expect(sse.done).toBe(true);
    // 10 tokens, 9 decode steps of ≥ 25 ms after the first: ≥ 225 ms between first and last token.
    const span = sse.times.at(-1)! - sse.times[1]!;
    expect(span).toBeGreaterThan(150);
    const distinct = new Set(sse.times.map((t) => Math.round(t / 10)));
    expect(distinct.size).toBeGreaterThan(3);
  });

  it("records its own time to first content per x-request-id, within the client's TTFT", async () => {
    const sentAt = performance.now();
    const res = await fetch(`${slow.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "server-ttft-test-1" },
      body: JSON.stringify(chat("time me", { stream: true, max_tokens: 3 })),
    });
    const headersAfter = performance.now() - sentAt;
    const sse = await readSse(res);
    // chunk 0 is the role chunk (empty content); chunk 1 carries the first token.
    const clientTtft = headersAfter + sse.times[1]!;
    const server = slow.serverTtftMs("server-ttft-test-1");
    expect(server).toBeDefined();
    // The server's span starts after the send and ends before the client reads the chunk.
    expect(server!).toBeGreaterThan(0);
    expect(server!).toBeLessThanOrEqual(clientTtft);
    expect(slow.serverTtftMs("never-sent-id")).toBeUndefined();
  });

  it("finds a request's time under the id the gateway forwards (the client's id with a hex suffix)", async () => {
    const res = await fetch(`${slow.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "leaver-s-7-0a1b2c3d4e5f" },
      body: JSON.stringify(chat("time me too", { stream: true, max_tokens: 2 })),
    });
    await readSse(res);
    expect(slow.serverTtftMs("leaver-s-7")).toBeDefined();
    // Another client id that merely starts alike is not this request.
    expect(slow.serverTtftMs("leaver-s")).toBeUndefined();
  });

  it("returns n choices and honours stop strings", async () => {
    const res = await post("/v1/chat/completions", chat("many", { n: 3, max_tokens: 30 }));
    const body = (await res.json()) as { choices: Choice[]; usage: Usage };
    expect(body.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(new Set(body.choices.map((c) => c.message!.content)).size).toBe(3);
    expect(body.usage.completion_tokens).toBe(90);

    // Stop at the third word of choice 0: the text ends before it, finish_reason "stop".
    const words = body.choices[0]!.message!.content.split(" ");
    const stop = ` ${words[2]}`;
    const cut = (await (
      await post("/v1/chat/completions", chat("many", { max_tokens: 30, stop: [stop] }))
    ).json()) as { choices: Choice[]; usage: Usage };
    const c0 = cut.choices[0]!;
    expect(c0.finish_reason).toBe("stop");
    expect(c0.message!.content).toBe(body.choices[0]!.message!.content.split(stop)[0]);
    expect(cut.usage.completion_tokens).toBeLessThanOrEqual(3);
  });

  it("ends an answer at min_tokens (its natural length), below a max_tokens cap or without one", async () => {
    const answer = async (extra: Record<string, unknown>) =>
      (await (await post("/v1/chat/completions", chat("natural", extra))).json()) as {
        choices: Choice[];
        usage: Usage;
      };
    // No min_tokens: writes to the cap, as before.
    const capped = await answer({ max_tokens: 12 });
    expect(capped.usage.completion_tokens).toBe(12);
    expect(capped.choices[0]!.finish_reason).toBe("length");
    // min_tokens below the cap: EOS at min_tokens; the text is the same answer, shorter.
    const natural = await answer({ max_tokens: 2048, min_tokens: 7 });
    expect(natural.usage.completion_tokens).toBe(7);
    expect(natural.choices[0]!.finish_reason).toBe("stop");
    expect(capped.choices[0]!.message!.content.startsWith(natural.choices[0]!.message!.content)).toBe(true);
    // No cap at all (the client sent none): min_tokens still ends it, not the 256 default.
    const { max_tokens: _unset, ...uncapped } = chat("natural", { min_tokens: 300 });
    const long = (await (await post("/v1/chat/completions", uncapped)).json()) as { usage: Usage };
    expect(long.usage.completion_tokens).toBe(300);
    // min_tokens equal to the cap: the cap ends it.
    expect((await answer({ max_tokens: 9, min_tokens: 9 })).choices[0]!.finish_reason).toBe("length");
    // As in vLLM, min_tokens above max_tokens is a bad request.
    expect(
      (await post("/v1/chat/completions", chat("natural", { max_tokens: 5, min_tokens: 6 }))).status,
    ).toBe(400);
  });
});

describe("emulator: completions", () => {
  it("accepts a string, token ids, and a batch, streaming or not", async () => {
    const one = (await (
      await post("/v1/completions", { model: MODEL, prompt: "Once upon a time", max_tokens: 5 })
    ).json()) as { object: string; choices: Choice[]; usage: Usage };
    expect(one.object).toBe("text_completion");
    expect(one.choices[0]!.text!.split(" ")).toHaveLength(5);
    expect(one.usage.prompt_tokens).toBe(4);
    const batch = (await (
      await post("/v1/completions", { model: MODEL, prompt: ["a b c", [1, 2, 3, 4, 5]], max_tokens: 2, n: 2 })
    ).json()) as { choices: Choice[]; usage: Usage };
    expect(batch.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(batch.usage.prompt_tokens).toBe(3 + 5);
    const sse = await readSse(
      await post("/v1/completions", {
        model: MODEL,
        prompt: "stream",
        max_tokens: 4,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(sse.done).toBe(true);
    const texts = sse.chunks
      .slice(0, -1)
      .map((c) => (c.choices as { text: string }[])[0]!.text)
      .join("");
    expect(texts.split(" ")).toHaveLength(4);
    expect((sse.chunks.at(-1)!.usage as Usage).prompt_tokens_details.cached_tokens).toBe(0);
  });
});

describe("emulator: errors, models, health, metrics", () => {
  const errorOf = async (res: Response): Promise<{ status: number; code: string | null; type: string }> => {
    const body = (await res.json()) as { error: { code: string | null; type: string; message: string } };
    expect(typeof body.error.message).toBe("string");
    return { status: res.status, code: body.error.code, type: body.error.type };
  };

  it("answers OpenAI-style errors", async () => {
    expect((await errorOf(await post("/v1/chat/completions", "{not json"))).status).toBe(400);
    expect((await errorOf(await post("/v1/chat/completions", { messages: [] }))).status).toBe(400);
    expect((await errorOf(await post("/v1/chat/completions", { model: MODEL }))).status).toBe(400);
    expect(await errorOf(await post("/v1/chat/completions", { ...chat("x"), model: "nope" }))).toEqual({
      status: 404,
      code: "model_not_found",
      type: "invalid_request_error",
    });
    expect((await errorOf(await post("/v1/chat/completions", chat("x"), "wrong"))).status).toBe(401);
    expect((await errorOf(await post("/v1/chat/completions", chat("x"), null))).status).toBe(401);
    expect((await errorOf(await post("/v1/chat/completions", chat("x", { n: 0 })))).status).toBe(400);
    expect(
      (await errorOf(await post("/v1/chat/completions", chat("x", { max_tokens: 1_000_000 })))).status,
    ).toBe(400);
    // Past max_model_len (131,072) though the KV cache would hold it: vLLM's 400 and its message.
    const past = await post("/v1/chat/completions", chat("x", { max_tokens: 131_072 }));
    expect(past.status).toBe(400);
    expect(await past.text()).toContain(
      "'max_tokens' or 'max_completion_tokens' is too large: 131072. This model's maximum context length is 131072 tokens and your request has",
    );
    // Without --api-key any key (or none) is accepted.
    expect((await post("/v1/chat/completions", chat("x"), "anything", slow)).status).toBe(200);
  });

  it("answers a prompt of 3.5 M spaces, and refuses one past the context after a context's worth of work", async () => {
    const work = emulatorTokenizer().work;
    const before = { ...work };
    // The fuzz case that froze the fuzz driver: 1,024-space pieces, each merged once, then remembered.
    const spaces = await post("/v1/chat/completions", {
      model: MODEL,
      messages: [{ role: "user", content: " ".repeat(3_500_000) }],
      max_tokens: 4,
    });
    expect(spaces.status).toBe(200);
    const usage = ((await spaces.json()) as { usage: Usage }).usage;
    expect(usage.prompt_tokens).toBeGreaterThan(20_000);
    expect(usage.prompt_tokens).toBeLessThan(131_072);
    expect(work.mergedBytes - before.mergedBytes).toBeLessThan(64 * 1024);
    // 4 M letters are ~500k tokens: vLLM's renderer refuses them; encoding stopped just past 131,072.
    const mid = { ...work };
    const letters = await post("/v1/completions", {
      model: MODEL,
      prompt: "a".repeat(4_000_000),
      max_tokens: 4,
    });
    expect(letters.status).toBe(400);
    const body = (await letters.json()) as { error: { message: string; param: string } };
    expect(body.error.message).toMatch(
      /^This model's maximum context length is 131072 tokens\. However, your request has at least 13\d{4} input tokens\. Please reduce the length of the input messages\.$/,
    );
    expect(body.error.param).toBe("prompt");
    expect(work.chars - mid.chars).toBeLessThan(2_000_000);
  });

  it("serves /health, /v1/models and vLLM-named /metrics", async () => {
    expect((await fetch(`${emu.url}/health`)).status).toBe(200);
    const models = (await (
      await fetch(`${emu.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })
    ).json()) as { data: { id: string; max_model_len: number }[] };
    expect(models.data.map((m) => m.id)).toEqual([MODEL]);
    // The default preset's context (Llama 3.1: 131,072), not its 442k-token KV cache.
    expect(models.data[0]!.max_model_len).toBe(131_072);
    const text = await (await fetch(`${emu.url}/metrics`)).text();
    const value = (name: string): number => {
      const line = text.split("\n").find((l) => l.startsWith(`${name}{`));
      expect(line, name).toBeDefined();
      expect(line).toContain(`model_name="${MODEL}"`);
      return Number(line!.split(" ").at(-1));
    };
    for (const name of ["vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"])
      expect(value(name)).toBeGreaterThanOrEqual(0);
    const m = emu.metrics();
    expect(value("vllm:prefix_cache_queries_total")).toBe(m.prefixQueryTokens);
    expect(value("vllm:prefix_cache_hits_total")).toBeGreaterThan(0);
    expect(value("vllm:prompt_tokens_total")).toBe(m.promptTokensTotal);
    expect(value("vllm:generation_tokens_total")).toBe(m.generationTokensTotal);
    expect(value("vllm:request_success_total")).toBeGreaterThan(0);
  });

  it("aborts the engine request when the client disconnects", async () => {
    const ac = new AbortController();
    const res = await fetch(`${slow.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify(chat("leave early", { stream: true, max_tokens: 400 })),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // first bytes: the request is running
    expect(slow.metrics().running).toBe(1);
    ac.abort();
    await reader.read().catch(() => undefined);
    for (let i = 0; i < 100 && slow.metrics().running > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(slow.metrics().running).toBe(0);
    expect(slow.metrics().kvUsage).toBe(0);
  });
});
