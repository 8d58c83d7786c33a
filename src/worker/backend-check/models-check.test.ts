import { describe, expect, it } from "vitest";
import { checkBackendModels, LISTED_SHOWN, modelList, modelVerdict } from "./models-check";

const OPTS = { deadlineMs: 500, maxBytes: 4096, clock: () => 1234 };

/** A fetch that answers every call with `res()` and records what it was asked. */
function fake(res: () => Response | Promise<Response>) {
  const calls: { url: string; init: RequestInit | undefined }[] = [];
  const f = (async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(input), init });
    return res();
  }) as typeof fetch;
  return { f, calls };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

// The shapes each engine answers (README "Backend check"): vLLM / SGLang / trtllm-serve list their served names.
const VLLM = {
  object: "list",
  data: [
    {
      id: "llama-3.1-8b-instruct",
      object: "model",
      owned_by: "vllm",
      root: "meta-llama/Llama-3.1-8B-Instruct",
    },
  ],
};
// llama-server with one model: id is the alias, or the model file's path; it answers any model name.
const LLAMA_ONE = {
  object: "list",
  data: [
    { id: "/models/Llama-3.1-8B-Instruct-Q4_K_M.gguf", object: "model", owned_by: "llamacpp", meta: {} },
  ],
};
// llama-server's router mode: several models, each with aliases and a status; it answers only those names.
const LLAMA_ROUTER = {
  object: "list",
  data: [
    { id: "qwen", aliases: ["qwen2.5-7b"], owned_by: "llamacpp", status: { value: "loaded" } },
    { id: "llama", aliases: ["llama-3.1-8b-instruct"], owned_by: "llamacpp", status: { value: "unloaded" } },
  ],
};

describe("checkBackendModels", () => {
  it("GETs {url}/v1/models with the backend's key, never following a redirect; the model listed is ok", async () => {
    const { f, calls } = fake(() => json(VLLM));
    const r = await checkBackendModels("http://gpu-1:8000/pfx", "llama-3.1-8b-instruct", {
      ...OPTS,
      fetch: f,
      apiKey: "k-1",
    });
    expect(r).toEqual({ state: "ok", at: 1234, reachable: true, status: 200, model: "listed" });
    expect(calls[0]!.url).toBe("http://gpu-1:8000/pfx/v1/models");
    expect(calls[0]!.init?.redirect).toBe("manual");
    expect((calls[0]!.init!.headers as Record<string, string>).authorization).toBe("Bearer k-1");
  });

  it("another model name, even one differing only in case, is model_not_listed with what the backend lists", async () => {
    const { f } = fake(() => json(VLLM));
    const r = await checkBackendModels("http://gpu-1:8000", "Llama-3.1-8B-Instruct", { ...OPTS, fetch: f });
    expect(r).toMatchObject({
      state: "model_not_listed",
      reachable: true,
      status: 200,
      model: "absent",
      listed: ["llama-3.1-8b-instruct"],
    });
    expect(r.detail).toContain("exactly");
  });

  it("a path the server does not serve (its 404) is bad_status 404 with a hint about the path", async () => {
    const { f } = fake(() => new Response("No route for GET /vllm/v1/models.", { status: 404 }));
    const r = await checkBackendModels("http://gpu-1:8000/vllm", "m", { ...OPTS, fetch: f });
    expect(r).toMatchObject({ state: "bad_status", reachable: true, status: 404 });
    expect(r.detail).toContain("path");
  });

  it("a refused key, a redirect: bad_status naming the cause", async () => {
    const r401 = await checkBackendModels("http://x", "m", { ...OPTS, fetch: fake(() => json({}, 401)).f });
    expect(r401).toMatchObject({ state: "bad_status", status: 401 });
    expect(r401.detail).toContain("apiKey");
    const redirect = new Response(null, { status: 307, headers: { location: "http://elsewhere/v1/models" } });
    const r307 = await checkBackendModels("http://x", "m", { ...OPTS, fetch: fake(() => redirect).f });
    expect(r307).toMatchObject({ state: "bad_status", status: 307 });
    expect(r307.detail).toContain("redirect");
  });

  it("unreachable: a refused connection, without the url the runtime's message names", async () => {
    const f = (async () => {
      throw new TypeError("fetch failed: connect ECONNREFUSED http://10.0.0.9:8000/v1/models");
    }) as typeof fetch;
    const r = await checkBackendModels("http://10.0.0.9:8000", "m", { ...OPTS, fetch: f });
    expect(r).toMatchObject({ state: "unreachable", reachable: false });
    expect(r.status).toBeUndefined();
    expect(r.detail).not.toContain("10.0.0.9");
  });

  it("a 200 that is a page, or not a model list, or too long, is unreadable", async () => {
    const html = new Response("<html>login</html>", {
      status: 200,
      headers: { "content-type": "text/html" },
    });
    expect(await checkBackendModels("http://x", "m", { ...OPTS, fetch: fake(() => html).f })).toMatchObject({
      state: "unreadable",
      status: 200,
    });
    expect(
      await checkBackendModels("http://x", "m", { ...OPTS, fetch: fake(() => json({ models: [] })).f }),
    ).toMatchObject({ state: "unreadable" });
    const big = json({ object: "list", data: [{ id: "m", pad: "x".repeat(10_000) }] });
    const r = await checkBackendModels("http://x", "m", { ...OPTS, fetch: fake(() => big).f });
    expect(r).toMatchObject({ state: "unreadable" });
    expect(r.detail).toContain("4096 bytes");
  });

  it("a body that stalls ends at the deadline", async () => {
    const stalled = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"object":"list","data":['));
      },
    });
    const started = Date.now();
    const r = await checkBackendModels("http://x", "m", {
      ...OPTS,
      deadlineMs: 150,
      fetch: fake(() => new Response(stalled, { status: 200 })).f,
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(r).toMatchObject({ state: "unreadable", detail: "timeout (body)" });
  });

  it("with no model to look for, a readable list is ok", async () => {
    const r = await checkBackendModels("http://x", undefined, { ...OPTS, fetch: fake(() => json(VLLM)).f });
    expect(r).toEqual({ state: "ok", at: 1234, reachable: true, status: 200 });
  });

  it("shows at most LISTED_SHOWN ids of a long list", async () => {
    const many = { data: Array.from({ length: 20 }, (_, i) => ({ id: `lora-${i}` })) };
    const r = await checkBackendModels("http://x", "m", { ...OPTS, fetch: fake(() => json(many)).f });
    expect(r.listed).toHaveLength(LISTED_SHOWN);
  });
});

describe("modelVerdict", () => {
  it("llama-server with one model answers any name: any, whatever its id", () => {
    expect(modelVerdict(modelList(LLAMA_ONE)!, "llama-3.1-8b-instruct")).toBe("any");
  });

  it("llama-server's router mode answers only its names and aliases", () => {
    const list = modelList(LLAMA_ROUTER)!;
    expect(modelVerdict(list, "llama-3.1-8b-instruct")).toBe("listed");
    expect(modelVerdict(list, "qwen")).toBe("listed");
    expect(modelVerdict(list, "mistral")).toBe("absent");
  });

  it("another engine's single entry is matched exactly", () => {
    expect(modelVerdict(modelList(VLLM)!, "meta-llama/Llama-3.1-8B-Instruct")).toBe("absent");
  });
});
