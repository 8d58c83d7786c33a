/**
 * The relay: SSE arrives chunk by chunk and byte-identical to what the
 * backend sends; usage is tapped without the client seeing extra chunks;
 * non-streamed and /v1/completions bodies pass through.
 */
import { describe, expect, it } from "vitest";
import { startsLikeEventStream } from "../../src/worker/inference/sniff-event-stream";
import { JsonTap, readUsage, SseTap } from "../../src/worker/inference/stream-tap";
import {
  authHeaders,
  BACKEND_KEY,
  backendUrl,
  chat,
  chatBody,
  gateway,
  longPrompt,
  MODEL,
  poolStats,
  settle,
} from "./helpers";

interface Timed {
  chunks: Uint8Array[];
  at: number[];
}

async function readTimed(res: Response): Promise<Timed> {
  const reader = res.body!.getReader();
  const out: Timed = { chunks: [], at: [] };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.chunks.push(value);
    out.at.push(Date.now());
  }
}

const text = (t: Timed) => new TextDecoder().decode(concat(t.chunks));
function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.byteLength;
  }
  return out;
}

/**
 * The emulator stamps each response with a fresh id and creation time, and the direct replay finds the
 * prompt already cached (that is the point of the gateway); every other byte, separators included, must match.
 */
const normalize = (s: string) =>
  s
    .replace(/"id":"[^"]*"/g, '"id":"X"')
    .replace(/"created":\d+/g, '"created":0')
    .replace(/"cached_tokens":\d+/g, '"cached_tokens":0');

describe("streaming relay", () => {
  it("relays SSE chunk by chunk, byte-identical to the backend's own stream", async () => {
    const body = chatBody(longPrompt("sse"), "stream please", {
      stream: true,
      max_tokens: 24,
      stream_options: { include_usage: true },
      temperature: 0,
    });
    const start = Date.now();
    const res = await chat(body);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const viaGateway = await readTimed(res);
    // Chunk by chunk: many reads, spread over the generation time rather than one buffered blob.
    expect(viaGateway.chunks.length).toBeGreaterThan(10);
    expect(viaGateway.at.at(-1)! - viaGateway.at[0]!).toBeGreaterThan(20);
    expect(viaGateway.at[0]! - start).toBeLessThan(viaGateway.at.at(-1)! - start);

    const backend = res.headers.get("x-prefix-gateway-backend")!;
    await settle();
    const direct = await fetch(`${backendUrl(backend)}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${BACKEND_KEY}`, "content-type": "application/json" },
      body,
    });
    const directText = text(await readTimed(direct));
    const gatewayText = text(viaGateway);
    expect(normalize(gatewayText)).toBe(normalize(directText));
    expect(gatewayText).toContain('"usage"');
    expect(gatewayText.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  it("taps usage for the router but strips the usage chunk the client did not ask for", async () => {
    const before = (await poolStats()).usage.withUsage;
    const res = await chat(chatBody(longPrompt("strip"), "q", { stream: true, max_tokens: 8 }));
    const t = text(await readTimed(res));
    expect(t).not.toContain('"usage"');
    expect(t).toContain("data: [DONE]");
    await settle();
    expect((await poolStats()).usage.withUsage).toBe(before + 1);
  });

  it("passes a non-streamed body and unknown fields through, and serves /v1/completions", async () => {
    const res = await chat(
      chatBody("You are terse.", "hello", { max_tokens: 5, vendor_extension: { a: 1 } }),
    );
    expect(res.status).toBe(200);
    const json = (await res.json()) as { object: string; model: string; usage: { prompt_tokens: number } };
    expect(json.object).toBe("chat.completion");
    expect(json.model).toBe(MODEL);
    expect(json.usage.prompt_tokens).toBeGreaterThan(0);

    const comp = await gateway("/v1/completions", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ model: MODEL, prompt: longPrompt("completion"), max_tokens: 6, stream: true }),
    });
    expect(comp.status).toBe(200);
    const t = text(await readTimed(comp));
    expect(t).toContain('"text_completion"');
    await settle();
  });
});

describe("stream tap (unit)", () => {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const role = ev({ choices: [{ index: 0, delta: { role: "assistant", content: "" } }] });
  const tok = ev({ choices: [{ index: 0, delta: { content: "hi" } }] });
  const usage = ev({
    choices: [],
    usage: { prompt_tokens: 50, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 32 } },
  });
  const done = "data: [DONE]\n\n";
  const stream = [role, tok, usage, done].join("");

  /** Feeds `text` in pieces of `size` bytes (splitting events and even UTF-8 sequences). */
  function feed(tap: SseTap, text: string, size: number): { out: string; contentAfterChunk: number } {
    const bytes = enc.encode(text);
    let out = "";
    let contentAfterChunk = -1;
    for (let i = 0; i < bytes.length; i += size) {
      const chunk = bytes.subarray(i, i + size);
      const fwd = tap.push(chunk);
      if (fwd !== null) out += dec.decode(fwd, { stream: true });
      if (contentAfterChunk < 0 && tap.sawContent) contentAfterChunk = i;
    }
    const rest = tap.end();
    if (rest !== null) out += dec.decode(rest);
    return { out, contentAfterChunk };
  }

  it.each([1, 7, 64, 4096])(
    "pass-through forwards every chunk unchanged and reads usage (chunks of %i)",
    (size) => {
      const tap = new SseTap(false);
      const { out } = feed(tap, stream, size);
      expect(out).toBe(stream);
      expect(tap.usage).toEqual({ promptTokens: 50, completionTokens: 1, cachedTokens: 32 });
      expect(tap.sawContent).toBe(true);
    },
  );

  it.each([1, 5, 33, 4096])("strip mode drops only the usage-only event (chunks of %i)", (size) => {
    const tap = new SseTap(true);
    const { out } = feed(tap, stream.replace(/\n\n/g, "\r\n\r\n"), size);
    expect(out).toBe([role, tok, done].join("").replace(/\n\n/g, "\r\n\r\n"));
    expect(tap.usage?.cachedTokens).toBe(32);
  });

  it("marks content at the first generated token, not the role preamble", () => {
    const tap = new SseTap(false);
    tap.push(enc.encode(role));
    expect(tap.sawContent).toBe(false);
    tap.push(enc.encode(tok));
    expect(tap.sawContent).toBe(true);
  });

  it("keeps multi-byte characters intact across chunk splits in strip mode", () => {
    const tap = new SseTap(true);
    const text = ev({ choices: [{ index: 0, delta: { content: "héllo → 世界 🚀" } }] });
    expect(feed(tap, text, 3).out).toBe(text);
  });

  it.each([
    [true, 16381, "\n\n"],
    [true, 65539, "\r\n\r\n"],
    [false, 4093, "\r\n\r\n"],
    [true, 8191, "\r\r"],
    // Chunks of 3 bytes: 500,000 of them, linear in the event's length (a held text re-scanned per chunk
    // would take its square and not finish).
    [false, 3, "\r\n\r\n"],
  ])(
    "an event past the tap's bound goes whole, unparsed, and parsing resumes after it (strip %s, chunks of %i)",
    (strip, size, sep) => {
      const long = ev({ choices: [{ index: 0, delta: { content: "é".repeat(700 * 1024) } }] });
      const tap = new SseTap(strip);
      // The boundaries split every way the chunk size allows; é is two bytes, split too.
      const whole = [role, tok, long, tok, usage, done].join("").replace(/\n\n/g, sep);
      const { out } = feed(tap, whole, size);
      const want = strip ? [role, tok, long, tok, done].join("") : whole;
      expect(out).toBe(want.replace(/\n\n/g, sep));
      expect(tap.usage?.cachedTokens).toBe(32);
      expect(tap.midEvent).toBe(false);
    },
  );

  it("an event stream is told by its first bytes: a field or a comment, a BOM allowed; JSON is not one", () => {
    for (const t of ["data: {}", "event: x", ":ok", "id:1", "retry: 5", "\ufeffdata:", "da", ":"])
      expect(startsLikeEventStream(enc.encode(t))).toBe(true);
    for (const t of ['{"id":1}', " [1]", "", "dat x", "<html>", "\u00e9"])
      expect(startsLikeEventStream(enc.encode(t))).toBe(false);
  });

  it("reads usage from a non-streamed JSON body and forwards its bytes untouched", () => {
    const tap = new JsonTap();
    const body = JSON.stringify({
      choices: [],
      usage: { prompt_tokens: 9, prompt_tokens_details: { cached_tokens: 0 } },
    });
    const b = enc.encode(body);
    expect(tap.push(b.subarray(0, 10))).toEqual(b.subarray(0, 10));
    tap.push(b.subarray(10));
    tap.end();
    expect(tap.usage).toEqual({ promptTokens: 9, cachedTokens: 0 });
    expect(readUsage({})).toBeUndefined();
  });
});
