/**
 * What the backend receives: the client's request, byte for byte, except for
 * the one field the gateway adds (stream_options.include_usage, so that a
 * streamed answer carries usage the client did not ask for, stripped again on
 * the way back). Through the real Worker against the fake backend's /echo
 * (metrics-fault-server.ts), whose one content event is the body it got.
 */
import { describe, expect, it } from "vitest";
import { authHeaders, faultServerPool, gatewayWithEnv } from "./helpers";

/** The body the echo backend received, read from its stream's content events; and the stream's text. */
async function echoed(res: Response): Promise<{ received: string; text: string }> {
  expect(res.status).toBe(200);
  const text = await res.text();
  let received = "";
  for (const event of text.split("\n\n")) {
    if (!event.startsWith("data: {")) continue;
    const chunk = JSON.parse(event.slice(6)) as { choices: { delta?: { content?: string } }[] };
    received += chunk.choices[0]?.delta?.content ?? "";
  }
  return { received, text };
}

function send(model: string, body: string): Promise<Response> {
  return gatewayWithEnv(faultServerPool(model, "echo"), "/v1/chat/completions", {
    method: "POST",
    headers: authHeaders(),
    body,
  });
}

describe("the body sent upstream", () => {
  it("with stream_options given, only its value changes: a 64-bit seed and the rest of the text are the client's", async () => {
    const model = "echo-options";
    // A seed past 2^53 (vLLM takes any int64), a number JSON.parse cannot hold, and the client's own stream
    // option: none of it may change on the way, and include_usage is added beside the option.
    const body = `{"model":"${model}", "stream":true,"stream_options":{"continuous_usage_stats":false},"seed":9223372036854775807,"temperature":1.0,"logit_bias":{"50256":-100.0},"max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`;
    const { received, text } = await echoed(await send(model, body));
    expect(received).toBe(
      body.replace(
        `"stream_options":{"continuous_usage_stats":false}`,
        `"stream_options":{"continuous_usage_stats":false,"include_usage":true}`,
      ),
    );
    // The usage chunk the gateway asked for is not the client's: stripped.
    expect(text).not.toContain('"usage"');
  });

  it("stream_options with include_usage false, null, or written twice: every copy says true, nothing else moves", async () => {
    const model = "echo-options-2";
    for (const given of [
      `"stream_options":{"include_usage":false}`,
      `"stream_options":null`,
      `"stream_options" : { "include_usage" : false } ,"stream_options":{}`,
      `"stream\\u005foptions":{}`,
    ]) {
      const body = `{"model":"${model}","stream":true,${given},"seed":18014398509481985,"messages":[{"role":"user","content":"a \\"quoted\\" {brace}"}]}`;
      const { received, text } = await echoed(await send(model, body));
      const parsed = JSON.parse(received) as { stream_options: unknown };
      expect(parsed.stream_options).toEqual({ include_usage: true });
      expect(received).toContain(
        `"seed":18014398509481985,"messages":[{"role":"user","content":"a \\"quoted\\" {brace}"}]}`,
      );
      expect(received.startsWith(`{"model":"${model}","stream":true,`)).toBe(true);
      expect(received).not.toContain("false");
      expect(text).not.toContain('"usage"');
    }
  });

  it("without stream_options the field is appended and the text is otherwise the client's", async () => {
    const model = "echo-plain";
    const body = `{"model":"${model}","stream":true,"seed":9223372036854775807,"messages":[{"role":"user","content":"hi"}]}`;
    const { received } = await echoed(await send(model, body));
    expect(received).toBe(`${body.slice(0, -1)},"stream_options":{"include_usage":true}}`);
  });
});

describe("the X-Request-Id sent upstream", () => {
  const model = "echo-id";
  const ask = (headers: Record<string, string>) =>
    gatewayWithEnv(faultServerPool(model, "echo-id"), "/v1/chat/completions", {
      method: "POST",
      headers: authHeaders(headers),
      body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });

  it("two requests with the same client x-request-id reach the backend under two ids, each led by the client's", async () => {
    // vLLM takes the header as its engine's request id and refuses (or, with several API servers, breaks on)
    // a second one already running: a client's id must never reach a backend twice.
    const clientId = "client-fixed-id-0001";
    const [a, b] = await Promise.all([ask({ "x-request-id": clientId }), ask({ "x-request-id": clientId })]);
    const seenA = (await echoed(a)).received;
    const seenB = (await echoed(b)).received;
    expect(seenA).not.toBe(seenB);
    for (const [res, seen] of [
      [a, seenA],
      [b, seenB],
    ] as const) {
      expect(seen.startsWith(`${clientId}-`)).toBe(true);
      // The client keeps its own id, and is told the one the backend knows.
      expect(res.headers.get("x-request-id")).toBe(clientId);
      expect(res.headers.get("x-prefix-gateway-upstream-request-id")).toBe(seen);
    }
  });

  it("without a client id the backend gets the gateway's own, the one the client is given", async () => {
    const res = await ask({});
    const seen = (await echoed(res)).received;
    expect(seen).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get("x-request-id")).toBe(seen);
    expect(res.headers.get("x-prefix-gateway-upstream-request-id")).toBe(seen);
  });
});

describe("request ids in the body sent upstream", () => {
  const model = "echo-rid";
  const ask = (body: Record<string, unknown>) =>
    send(
      model,
      JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }], ...body }),
    );
  const bodyOf = async (res: Response) => JSON.parse((await echoed(res)).received) as Record<string, unknown>;

  it("two requests with one SGLang `rid` reach the backend under two, each led by the client's", async () => {
    // SGLang takes the body's rid as its engine's request id and hangs, crashes or refuses on a second one
    // running (sglang#8089, #19035): a client's rid must never reach a backend twice.
    const rid = "client-fixed-rid-0001";
    const [a, b] = await Promise.all([ask({ rid }), ask({ rid })]);
    const seenA = (await bodyOf(a)).rid as string;
    const seenB = (await bodyOf(b)).rid as string;
    expect(seenA).not.toBe(seenB);
    for (const seen of [seenA, seenB]) expect(seen).toMatch(/^client-fixed-rid-0001-[0-9a-f]{12}$/);
  });

  it("the rid gets the header's suffix; a batch's list of rids each get it; other bytes are the client's", async () => {
    const res = await send(
      model,
      `{"model":"${model}","rid":["x","y"],"stream":true,"seed":9223372036854775807,"messages":[{"role":"user","content":"hi"}]}`,
    );
    const { received } = await echoed(res);
    const upstreamId = res.headers.get("x-prefix-gateway-upstream-request-id") ?? "";
    const suffix = (JSON.parse(received) as { rid: string[] }).rid[0]!.slice(2);
    expect(suffix).toMatch(/^[0-9a-f]{12}$/);
    expect(received).toBe(
      `{"model":"${model}","rid":["x-${suffix}","y-${suffix}"],"stream":true,"seed":9223372036854775807,"messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}}`,
    );
    // No client x-request-id: the header is the gateway's UUID, as is; with one, it ends in the same suffix.
    expect(upstreamId).toMatch(/^[0-9a-f-]{36}$/);
    const withId = await gatewayWithEnv(faultServerPool(model, "echo"), "/v1/chat/completions", {
      method: "POST",
      headers: authHeaders({ "x-request-id": "trace-0007" }),
      body: JSON.stringify({ model, stream: true, rid: "r", messages: [{ role: "user", content: "hi" }] }),
    });
    const header = withId.headers.get("x-prefix-gateway-upstream-request-id") ?? "";
    expect((await bodyOf(withId)).rid).toBe(`r-${header.slice("trace-0007-".length)}`);
  });

  it("a rid that is no id (a number) and vLLM's request_id (the header decides there) go as sent", async () => {
    const received = (await echoed(await ask({ rid: 7, request_id: "client-req" }))).received;
    const seen = JSON.parse(received) as Record<string, unknown>;
    expect(seen.rid).toBe(7);
    expect(seen.request_id).toBe("client-req");
  });
});
