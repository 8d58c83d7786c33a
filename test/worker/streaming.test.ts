/**
 * The relay: SSE arrives chunk by chunk and byte-identical to what the
 * backend sends; usage is tapped without the client seeing extra chunks;
 * non-streamed and /v1/completions bodies pass through.
 */
import { describe, expect, it } from "vitest";
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
