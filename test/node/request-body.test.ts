/**
 * readInferenceBody under Node (same web APIs as workerd): absurd values
 * refused with 400 and the field as `param`, sane ones and unknown fields
 * passed through untouched, costly JSON refused before parsing, and the
 * first bad element reported without validating the rest.
 */
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/worker/errors";
import {
  chatBodySchema,
  completionsBodySchema,
  type InferenceKind,
} from "../../src/worker/request/openai-schemas";
import { readBodyBytes } from "../../src/worker/request/read-body";
import { readInferenceBody } from "../../src/worker/request/request-body";
import {
  MAX_BODY_BYTES,
  MAX_CHOICES,
  MAX_JSON_DEPTH,
  MAX_JSON_KEYS,
  MAX_JSON_VALUES,
  MAX_OUTPUT_TOKENS,
  MAX_STOP_SEQUENCES,
} from "../../src/worker/request/request-limits";

function request(body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Request {
  return new Request("https://gateway.test/v1/x", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
    duplex: "half",
  } as RequestInit & { duplex: "half" });
}

/** The outcome: "ok", or "<status> <code> <param>". */
async function outcome(body: unknown, kind: InferenceKind = "chat"): Promise<string> {
  try {
    await readInferenceBody(request(typeof body === "string" ? body : JSON.stringify(body)), kind);
    return "ok";
  } catch (err) {
    if (err instanceof GatewayError) return `${err.status} ${err.code} ${err.param}`;
    throw err;
  }
}

const chat = (extra: Record<string, unknown> = {}) => ({
  model: "m",
  messages: [{ role: "user", content: "hi" }],
  ...extra,
});
const completions = (extra: Record<string, unknown> = {}) => ({ model: "m", prompt: "hi", ...extra });

describe("absurd values are refused at the edge", () => {
  it.each([
    ["max_tokens", 0],
    ["max_tokens", -1],
    ["max_tokens", 1.5],
    ["max_tokens", MAX_OUTPUT_TOKENS + 1],
    ["max_tokens", 1e300],
    ["max_tokens", "16"],
    ["max_completion_tokens", 0],
    ["max_completion_tokens", 2 ** 31],
    ["n", 0],
    ["n", MAX_CHOICES + 1],
    ["n", 2.5],
    ["stop", Array.from({ length: MAX_STOP_SEQUENCES + 1 }, (_, i) => `s${i}`)],
    ["stop", 7],
    ["model", "m".repeat(257)],
  ])("chat %s = %j → 400 with that param", async (field, value) => {
    expect(await outcome(chat({ [field]: value }))).toBe(`400 invalid_value ${field}`);
  });

  it.each([
    ["max_tokens", 1],
    ["max_tokens", MAX_OUTPUT_TOKENS],
    ["max_tokens", null],
    ["max_completion_tokens", 4096],
    ["n", 1],
    ["n", MAX_CHOICES],
    ["n", null],
    ["stop", "END"],
    ["stop", Array.from({ length: MAX_STOP_SEQUENCES }, (_, i) => `s${i}`)],
    ["stop", null],
  ])("chat %s = %j passes", async (field, value) => {
    expect(await outcome(chat({ [field]: value }))).toBe("ok");
  });

  it("bounds the choices of a completions batch: prompts × max(n, best_of) ≤ MAX_CHOICES", async () => {
    const prompts = (k: number) => Array.from({ length: k }, (_, i) => `p${i}`);
    expect(await outcome(completions({ prompt: prompts(MAX_CHOICES) }), "completions")).toBe("ok");
    expect(await outcome(completions({ prompt: prompts(MAX_CHOICES + 1) }), "completions")).toBe(
      "400 invalid_value prompt",
    );
    expect(await outcome(completions({ prompt: prompts(64), n: 2 }), "completions")).toBe("ok");
    expect(await outcome(completions({ prompt: prompts(65), n: 2 }), "completions")).toBe(
      "400 invalid_value n",
    );
    expect(await outcome(completions({ prompt: prompts(8), n: 2, best_of: 20 }), "completions")).toBe(
      "400 invalid_value best_of",
    );
    expect(await outcome(completions({ best_of: 21 }), "completions")).toBe("400 invalid_value best_of");
    const ids = Array.from({ length: MAX_CHOICES + 1 }, () => [1, 2, 3]);
    expect(await outcome(completions({ prompt: ids }), "completions")).toBe("400 invalid_value prompt");
  });

  it("checks prompt shapes and names the first bad element", async () => {
    expect(await outcome(completions({ prompt: [1, 2, 3] }), "completions")).toBe("ok");
    expect(await outcome(completions({ prompt: [[1], [2, 3]] }), "completions")).toBe("ok");
    expect(await outcome(completions({ prompt: [] }), "completions")).toBe("ok");
    expect(await outcome(completions({ prompt: [1, 2.5] }), "completions")).toBe(
      "400 invalid_value prompt[1]",
    );
    expect(await outcome(completions({ prompt: [[1], [2, "x"]] }), "completions")).toBe(
      "400 invalid_value prompt[1][1]",
    );
    expect(await outcome(completions({ prompt: ["a", 1] }), "completions")).toBe(
      "400 invalid_value prompt[1]",
    );
    expect(await outcome(completions({ prompt: { a: 1 } }), "completions")).toBe("400 invalid_value prompt");
    expect(await outcome({ model: "m" }, "completions")).toBe("400 invalid_value prompt");
  });

  it("says a missing prompt is required, in words a client can act on", async () => {
    const missing = readInferenceBody(request(JSON.stringify({ model: "m" })), "completions");
    await expect(missing).rejects.toThrow("'prompt' is required");
    await expect(missing).rejects.not.toThrow(/nonoptional/);
  });

  it("refuses a wrong type in any field the schemas check in the gateway's words, never zod's", async () => {
    const wrong: unknown[] = ["yes", 1, 1.5, true, [], [1], {}, { a: 1 }];
    const bodies: [InferenceKind, unknown][] = [];
    // Every top-level field each schema checks, so a field added later is swept too.
    for (const field of Object.keys(chatBodySchema.shape))
      for (const v of wrong) bodies.push(["chat", chat({ [field]: v })]);
    for (const field of Object.keys(completionsBodySchema.in.shape))
      for (const v of wrong) bodies.push(["completions", completions({ [field]: v })]);
    // The nested places: a message, its fields, a content part, a stop sequence, stream_options' member.
    for (const v of wrong)
      bodies.push(
        ["chat", chat({ messages: [v] })],
        ["chat", chat({ messages: [{ role: v, content: "x" }] })],
        ["chat", chat({ messages: [{ role: "user", content: v }] })],
        ["chat", chat({ messages: [{ role: "user", content: [v] }] })],
        ["chat", chat({ messages: [{ role: "user", content: [{ type: v }] }] })],
        ["chat", chat({ messages: [{ role: "user", content: "x", name: v }] })],
        ["chat", chat({ stop: [v] })],
        ["chat", chat({ stream_options: { include_usage: v } })],
      );
    let refused = 0;
    for (const [kind, body] of bodies) {
      const message = await readInferenceBody(request(JSON.stringify(body)), kind).then(
        () => undefined,
        (err: GatewayError) => err.message,
      );
      if (message === undefined) continue;
      refused++;
      expect(message, JSON.stringify(body)).toMatch(/^'[^']+' (?:must|is|holds) /);
      expect(message, JSON.stringify(body)).not.toMatch(/Invalid|expected|received|Too (?:small|big)/);
    }
    expect(refused).toBeGreaterThan(100);
    // The case a client met: stream_options as a string.
    await expect(
      readInferenceBody(request(JSON.stringify(chat({ stream_options: "yes" }))), "chat"),
    ).rejects.toThrow("'stream_options' must be an object");
  });

  it("passes unknown fields (and known ones) through untouched", async () => {
    const body = {
      ...chat({ max_tokens: 7, n: 3 }),
      top_k: 40,
      regex: "[a-z]+",
      vendor: { nested: [1, { x: null }] },
      logit_bias: { "50256": -100 },
    };
    const text = JSON.stringify(body);
    const parsed = await readInferenceBody(request(text), "chat");
    expect(parsed.text).toBe(text);
    expect(parsed.raw).toEqual(body);
    expect(parsed.body).toMatchObject({
      top_k: 40,
      regex: "[a-z]+",
      vendor: body.vendor,
      max_tokens: 7,
      n: 3,
    });
  });
});

describe("bounded validation work", () => {
  it("reports the first bad message, not one issue per message", async () => {
    const messages = Array.from({ length: 100_000 }, () => ({ role: 5 }));
    expect(await outcome(chat({ messages }))).toBe("400 invalid_value messages[0].role");
    const mostlyGood = Array.from({ length: 100_000 }, (_, i) =>
      i === 70_000 ? { role: "user", content: [{ type: 1 }] } : { role: "user", content: "x" },
    );
    expect(await outcome(chat({ messages: mostlyGood }))).toBe(
      "400 invalid_value messages[70000].content[0].type",
    );
  });

  it("refuses JSON deeper than MAX_JSON_DEPTH, or with too many values or keys, before parsing it", async () => {
    const nested = (d: number) => `${"[".repeat(d)}${"]".repeat(d)}`;
    // The body object and the tools array are two levels: MAX_JSON_DEPTH − 2 more fit.
    const deep = (d: number) => `{"model":"m","messages":[{"role":"user"}],"tools":[${nested(d)}]}`;
    expect(await outcome(deep(MAX_JSON_DEPTH - 2))).toBe("ok");
    expect(await outcome(deep(MAX_JSON_DEPTH - 1))).toBe("400 json_too_complex null");
    expect(await outcome(deep(1_000_000))).toBe("400 json_too_complex null");
    const values = `{"model":"m","messages":[{"role":"user"}],"x":[${"0,".repeat(MAX_JSON_VALUES)}0]}`;
    expect(await outcome(values)).toBe("400 json_too_complex null");
    const keys = `{"model":"m","messages":[{"role":"user"}],"x":{${Array.from({ length: MAX_JSON_KEYS }, (_, i) => `"k${i}":0`).join(",")}}}`;
    expect(await outcome(keys)).toBe("400 json_too_complex null");
    // Brackets, colons and commas inside strings are text, not structure.
    const inStrings = chat({ messages: [{ role: "user", content: `${'[{:,\\"'.repeat(400_000)}` }] });
    expect(await outcome(inStrings)).toBe("ok");
  });
});

describe("body size", () => {
  it("refuses a declared content-length above the cap without reading the body", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        pulled++;
        ctl.enqueue(new Uint8Array(1024));
      },
    });
    const req = request(body, { "content-length": String(MAX_BODY_BYTES + 1) });
    await expect(readInferenceBody(req, "chat")).rejects.toMatchObject({
      status: 413,
      code: "request_too_large",
    });
    expect(pulled).toBeLessThanOrEqual(1); // a stream may pull once when it is built, never to the end
  });

  it("refuses a chunked body as soon as it passes the cap, having read barely more than the cap", async () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      start(ctl) {
        ctl.enqueue(new TextEncoder().encode('{"model":"m","messages":[{"role":"user","content":"'));
      },
      pull(ctl) {
        pulled += chunk.byteLength;
        if (pulled > 200 * 1024 * 1024) ctl.close();
        else ctl.enqueue(chunk.slice());
      },
    });
    await expect(readInferenceBody(request(body), "chat")).rejects.toMatchObject({
      status: 413,
      code: "request_too_large",
    });
    expect(pulled).toBeGreaterThan(MAX_BODY_BYTES - chunk.byteLength);
    expect(pulled).toBeLessThan(MAX_BODY_BYTES + 4 * chunk.byteLength);
  });
});

describe("a body that does not arrive whole", () => {
  it("a body whose stream breaks off (the client left mid-upload) is a 400 incomplete_body, not an internal error", async () => {
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (sent) return ctl.error(new Error("Network connection lost."));
        sent = true;
        ctl.enqueue(new TextEncoder().encode('{"model":"m","messages":[{"role":"user","content":"h'));
      },
    });
    await expect(readInferenceBody(request(body), "chat")).rejects.toMatchObject({
      status: 400,
      code: "incomplete_body",
    });
  });

  it("a compressed body is refused with 415 naming Content-Encoding, not misread as invalid JSON", async () => {
    const gz = new Response(
      new Blob([JSON.stringify(chat())]).stream().pipeThrough(new CompressionStream("gzip")),
    );
    const req = request((await gz.body)!, { "content-encoding": "gzip" });
    await expect(readInferenceBody(req, "chat")).rejects.toMatchObject({
      status: 415,
      code: "unsupported_content_encoding",
      param: null,
    });
    // identity (or no header) is the plain body.
    expect(
      await readInferenceBody(request(JSON.stringify(chat()), { "content-encoding": "identity" }), "chat"),
    ).toMatchObject({ body: { model: "m" } });
  });

  it("a body that stops arriving (never ends, or trickles slower than one chunk per idle deadline) is a 408, not a wait without end", async () => {
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        // One chunk, then nothing, ever: what an unterminated upload looks like from the Worker.
        if (pulls++ === 0) ctl.enqueue(new TextEncoder().encode('{"model":"m",'));
      },
    });
    const t0 = Date.now();
    await expect(readBodyBytes(request(body), MAX_BODY_BYTES, undefined, 100)).rejects.toMatchObject({
      status: 408,
      code: "request_timeout",
    });
    expect(Date.now() - t0).toBeLessThan(2000);
    // A slow body whose chunks each come within the deadline is read whole.
    const enc = new TextEncoder();
    let i = 0;
    const slow = new ReadableStream<Uint8Array>({
      async pull(ctl) {
        await new Promise((r) => setTimeout(r, 40));
        if (i++ < 5) ctl.enqueue(enc.encode("ab"));
        else ctl.close();
      },
    });
    expect(new TextDecoder().decode(await readBodyBytes(request(slow), MAX_BODY_BYTES, undefined, 100))).toBe(
      "ababababab",
    );
  });

  it("a body trickled within the idle deadline but not whole within the total one is a 408 at the total deadline", async () => {
    const enc = new TextEncoder();
    let i = 0;
    // A byte every 20 ms, 100 of them (2 s): each gap far inside the idle deadline (1 s here).
    const trickle = new ReadableStream<Uint8Array>({
      async pull(ctl) {
        await new Promise((r) => setTimeout(r, 20));
        if (i++ < 100) ctl.enqueue(enc.encode(" "));
        else ctl.close();
      },
    });
    const t0 = Date.now();
    const read = readBodyBytes(request(trickle), MAX_BODY_BYTES, undefined, 1000, 300);
    await expect(read).rejects.toMatchObject({ status: 408, code: "request_timeout" });
    await expect(read).rejects.toThrow("did not arrive whole within 300 ms");
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(1500);
    // Stopped: what was still coming is not read.
    expect(i).toBeLessThan(60);
  });
});
