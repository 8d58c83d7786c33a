/** Every client error gets the right status and an OpenAI-style body, through the real Worker. */
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, authHeaders, chat, expectOpenAIError, gateway, MODEL } from "./helpers";

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
  });

  it("answers an unknown model with 404 model_not_found", async () => {
    const res = await chat(
      JSON.stringify({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }),
    );
    await expectOpenAIError(res, 404, "model_not_found");
  });

  it("answers a wrong or missing key with 401 and does not route", async () => {
    const body = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }] });
    const wrong = await gateway("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer test-key-alphA", "content-type": "application/json" },
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
    for (const key of ["test-key-alpha", "test-key-beta"]) {
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

  it("answers unknown routes with an OpenAI-style 404", async () => {
    await expectOpenAIError(await gateway("/v1/nope", { headers: authHeaders() }), 404, "not_found");
    await expectOpenAIError(await gateway("/nope"), 404, "not_found");
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

  it("reports config validity publicly and pool stats only to the admin, never keys or urls", async () => {
    const pub = await gateway("/healthz");
    expect(pub.status).toBe(200);
    const pubBody = (await pub.json()) as { status: string; pools?: unknown };
    expect(pubBody.status).toBe("ok");
    expect(pubBody.pools).toBeUndefined();
    const admin = await gateway("/healthz", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const text = await admin.text();
    expect(text).toContain('"pools"');
    for (const secret of ["emu-test-key", "test-key-alpha", ADMIN_TOKEN, "127.0.0.1"])
      expect(text).not.toContain(secret);
  });
});
