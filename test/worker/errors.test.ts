/** Every client error gets the right status and an OpenAI-style body, through the real Worker. */
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/routing/defaults";
import { ADMIN_TOKEN, authHeaders, chat, chatBody, expectOpenAIError, gateway, MODEL } from "./helpers";

describe("client errors", () => {
  it("rejects invalid JSON with 400 invalid_json", async () => {
    await expectOpenAIError(await chat("{not json"), 400, "invalid_json");
  });

  it("rejects a JSON body that is not an object", async () => {
    await expectOpenAIError(await chat("[1,2]"), 400, "invalid_json");
  });

  it("rejects a missing model, naming the field", async () => {
    const res = await chat(JSON.stringify({ messages: [{ role: "user", content: "hi" }] }));
    const msg = await expectOpenAIError(res, 400, "invalid_value");
    expect(msg).toContain("model");
  });

  it("rejects missing messages with param=messages", async () => {
    const res = await chat(JSON.stringify({ model: MODEL }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { param: string } };
    expect(body.error.param).toBe("messages");
  });

  it("rejects a missing prompt on /v1/completions", async () => {
    const res = await gateway("/v1/completions", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ model: MODEL }),
    });
    await expectOpenAIError(res, 400, "invalid_value");
  });

  it("rejects bad field types with the field's path", async () => {
    const res = await chat(JSON.stringify({ model: MODEL, messages: [{ role: "user", content: 5 }] }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { param: string } };
    expect(body.error.param).toBe("messages[0].content");
    const res2 = await chat(
      JSON.stringify({ model: MODEL, stream: "yes", messages: [{ role: "user", content: "x" }] }),
    );
    await expectOpenAIError(res2, 400, "invalid_value");
    // In the gateway's words, not zod's ("Invalid input: expected object, received string").
    const res3 = await chat(
      JSON.stringify({ model: MODEL, stream_options: "yes", messages: [{ role: "user", content: "x" }] }),
    );
    expect(await expectOpenAIError(res3, 400, "invalid_value")).toBe("'stream_options' must be an object");
  });

  it("answers an unknown model with 404 model_not_found", async () => {
    const res = await chat(
      JSON.stringify({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(await expectOpenAIError(res, 404, "model_not_found")).toBe(
      "The model 'no-such-model' is not served by this gateway; GET /v1/models lists those it serves.",
    );
  });

  it("answers a wrong or missing key with 401 and does not route", async () => {
    const body = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }] });
    const wrong = await gateway("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer test-client-key-alphA", "content-type": "application/json" },
      body,
    });
    await expectOpenAIError(wrong, 401, "invalid_api_key");
    const missing = await gateway("/v1/chat/completions", { method: "POST", body });
    await expectOpenAIError(missing, 401, "invalid_api_key");
    // The admin token is not a client key.
    const admin = await gateway("/v1/models", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    await expectOpenAIError(admin, 401, "invalid_api_key");
  });

  it("accepts every configured key", async () => {
    for (const key of ["test-client-key-alpha", "test-client-key-beta"]) {
      const res = await gateway("/v1/models", { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
    }
  });

  it("refuses a body over the cap with 413", async () => {
    const res = await gateway("/v1/chat/completions", {
      method: "POST",
      headers: authHeaders({ "content-length": String(17 * 1024 * 1024) }),
      body: "{}",
    });
    await expectOpenAIError(res, 413, "request_too_large");
  });

  it("refuses a body over the cap with 413 as it streams in, having read barely more than the cap", async () => {
    // A pull-based body without content-length, far larger than the cap if read to the end:
    // the test never generates more than the Worker pulls.
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    const total = 1024 * 1024 * 1024;
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      start(ctl) {
        ctl.enqueue(new TextEncoder().encode(`{"model":"${MODEL}","messages":[{"role":"user","content":"`));
      },
      pull(ctl) {
        if (pulled >= total) return ctl.close();
        pulled += chunk.byteLength;
        ctl.enqueue(chunk.slice());
      },
    });
    const res = await gateway("/v1/chat/completions", { method: "POST", headers: authHeaders(), body });
    await expectOpenAIError(res, 413, "request_too_large");
    const cap = 16 * 1024 * 1024;
    expect(pulled).toBeGreaterThan(cap - 2 * chunk.byteLength);
    // Buffers between the test and the Worker may pull a little ahead; never the rest of the gigabyte.
    expect(pulled).toBeLessThan(cap + 4 * 1024 * 1024);
  });

  it("a gzip body is a 415 unsupported_content_encoding, not 'invalid JSON'", async () => {
    const gz = new Blob([chatBody("s", "hi")]).stream().pipeThrough(new CompressionStream("gzip"));
    const res = await gateway("/v1/chat/completions", {
      method: "POST",
      headers: authHeaders({ "content-encoding": "gzip" }),
      body: gz,
    });
    await expectOpenAIError(res, 415, "unsupported_content_encoding");
  });

  it("refuses JSON nested too deeply with 400 json_too_complex, before parsing it", async () => {
    const deep = `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"x":${"[".repeat(500_000)}${"]".repeat(500_000)}}`;
    await expectOpenAIError(await chat(deep), 400, "json_too_complex");
  });

  it("refuses absurd values with 400 and the field as param", async () => {
    for (const [field, value] of [
      ["max_tokens", 0],
      ["max_tokens", 2 ** 40],
      ["max_completion_tokens", -5],
      ["n", 129],
    ] as const) {
      const res = await chat(
        JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], [field]: value }),
      );
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { param: string; code: string } };
      expect(body.error).toMatchObject({ param: field, code: "invalid_value" });
    }
  });

  it("answers a wrong method on a known route with 405, an Allow header and an OpenAI-style body", async () => {
    for (const [method, path, allow] of [
      ["GET", "/v1/chat/completions", "POST"],
      ["PUT", "/v1/chat/completions", "POST"],
      ["DELETE", "/v1/completions", "POST"],
      ["POST", "/v1/models", "GET, HEAD"],
      ["POST", "/healthz", "GET, HEAD"],
    ] as const) {
      // With and without a key: the method is wrong either way, and the route table is no secret.
      for (const headers of [authHeaders(), {}]) {
        const res = await gateway(path, { method, headers });
        const msg = await expectOpenAIError(res, 405, "method_not_allowed");
        expect(res.headers.get("allow")).toBe(allow);
        expect(msg).toContain(method);
      }
    }
    // HEAD is GET without a body.
    expect((await gateway("/healthz", { method: "HEAD" })).status).toBe(200);
  });

  it("answers unknown routes with an OpenAI-style 404", async () => {
    await expectOpenAIError(await gateway("/v1/nope", { headers: authHeaders() }), 404, "not_found");
    await expectOpenAIError(await gateway("/nope"), 404, "not_found");
  });

  it("tells a client of an OpenAI endpoint it does not serve which ones it does", async () => {
    for (const [method, path] of [
      ["POST", "/v1/embeddings"],
      ["POST", "/v1/responses"],
      ["GET", "/v1/files"],
    ] as const) {
      const res = await gateway(path, {
        method,
        headers: authHeaders(),
        body: method === "POST" ? "{}" : null,
      });
      const msg = await expectOpenAIError(res, 404, "not_found");
      expect(msg).toContain(`${method} ${path}`);
      for (const served of ["POST /v1/chat/completions", "POST /v1/completions", "GET /v1/models"])
        expect(msg).toContain(served);
    }
  });

  it("never echoes an unbounded path: a long model id or route is cut in the 404's message", async () => {
    const long = "a".repeat(9000);
    for (const [path, code] of [
      [`/v1/models/${long}`, "model_not_found"],
      [`/v1/${long}`, "not_found"],
      [`/${long}`, "not_found"],
    ] as const) {
      const res = await gateway(path, { headers: authHeaders() });
      const msg = await expectOpenAIError(res, 404, code);
      expect(msg.length).toBeLessThan(1000);
      // Cut, and said to be: the client can tell its id was not echoed whole.
      expect(msg).toContain("a".repeat(200));
      expect(msg).not.toContain("a".repeat(300));
      expect(msg).toMatch(/900[0-9] characters/);
    }
  });

  it("sets x-request-id on every response, keeping a sane client id", async () => {
    const res = await gateway("/v1/nope", { headers: { "x-request-id": "client-req-123456" } });
    expect(res.headers.get("x-request-id")).toBe("client-req-123456");
    const res2 = await gateway("/v1/nope", { headers: { "x-request-id": "bad id with spaces" } });
    expect(res2.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("GET /v1/models and /healthz", () => {
  it("lists the fleet's models in OpenAI list shape", async () => {
    const res = await gateway("/v1/models", { headers: authHeaders() });
    expect(await res.json()).toEqual({
      object: "list",
      data: [{ id: MODEL, object: "model", created: 0, owned_by: "prefix-gateway" }],
    });
  });

  it("retrieves one model (GET /v1/models/{model}, the SDKs' models.retrieve), 404 model_not_found for another", async () => {
    const res = await gateway(`/v1/models/${MODEL}`, { headers: authHeaders() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: MODEL, object: "model", created: 0, owned_by: "prefix-gateway" });
    await expectOpenAIError(
      await gateway("/v1/models/nope", { headers: authHeaders() }),
      404,
      "model_not_found",
    );
    // An id with a slash, as the SDKs send it (encoded) and as curl users type it.
    for (const path of ["/v1/models/org%2Fnope", "/v1/models/org/nope"])
      await expectOpenAIError(await gateway(path, { headers: authHeaders() }), 404, "model_not_found");
    await expectOpenAIError(await gateway(`/v1/models/${MODEL}`), 401, "invalid_api_key");
    await expectOpenAIError(
      await gateway(`/v1/models/${MODEL}`, { method: "POST", headers: authHeaders() }),
      405,
      "method_not_allowed",
    );
  });

  it("tells the public liveness and config validity only: no models, no backend count, no stats", async () => {
    for (const headers of [{}, { authorization: "Bearer not-the-admin-token" }, authHeaders()]) {
      const pub = await gateway("/healthz", { headers });
      expect(pub.status).toBe(200);
      expect(await pub.json()).toEqual({ status: "ok", config: { ok: true } });
    }
  });

  it("gives the admin the config summary and pool stats, never keys or urls", async () => {
    const admin = await gateway("/healthz", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(admin.status).toBe(200);
    const text = await admin.text();
    const body = JSON.parse(text) as { status: string; config: Record<string, unknown>; pools: object };
    expect(body.status).toBe("ok");
    expect(body.config).toMatchObject({
      ok: true,
      models: [MODEL],
      policy: "prefix_aware",
      prefixTokens: SETTINGS.PREFIX_TOKENS.default,
    });
    expect(body.config.backends).toBeGreaterThan(0);
    expect(Object.keys(body.pools)).toContain(MODEL);
    for (const secret of ["emu-test-key", "test-client-key-alpha", ADMIN_TOKEN, "127.0.0.1"])
      expect(text).not.toContain(secret);
  });
});
