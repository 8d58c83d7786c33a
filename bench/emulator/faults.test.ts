/**
 * Every fault kind through real HTTP against a started emulator (set through
 * the in-process handle; control.test.ts covers the HTTP control endpoint).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EmulatorStats, FaultSpec } from "./fault-spec";
import { type Emulator, startEmulator } from "./server";
import {
  causeCode,
  chatRequest,
  contentOf,
  postChat,
  readSse,
  settlesWithin,
  TEST_MODEL,
  until,
} from "./test-client";

let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, model: TEST_MODEL, speed: 200 });
});

afterAll(async () => {
  await emu?.close();
});

afterEach(() => {
  emu.setFault(null);
  emu.setHealth(null);
});

const stats = (): EmulatorStats => emu.state().stats;

/** The change of each counter across `run`. */
async function delta(run: () => Promise<void>): Promise<Record<string, number>> {
  const flat = (s: EmulatorStats): Record<string, number> => {
    const { faulted, health, ...rest } = s;
    return {
      ...rest,
      ...Object.fromEntries(Object.entries(faulted).map(([k, v]) => [`faulted.${k}`, v])),
      "health.ok": health.ok,
      "health.failed": health.failed,
    };
  };
  const before = flat(stats());
  await run();
  const after = flat(stats());
  return Object.fromEntries(
    Object.entries(after)
      .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
      .filter(([, v]) => v !== 0),
  );
}

async function errorBody(
  res: Response,
): Promise<{ message: string; type: string; param: unknown; code: unknown }> {
  const body = (await res.json()) as {
    error: { message: string; type: string; param: unknown; code: unknown };
  };
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  return body.error;
}

describe("status faults", () => {
  it("answers 429 with an OpenAI-style rate-limit error and retry-after (1 s by default)", async () => {
    emu.setFault({ kind: "status", status: 429 });
    const d = await delta(async () => {
      const res = await postChat(emu.url, chatRequest("a"));
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(res.headers.get("content-type")).toContain("application/json");
      expect((await errorBody(res)).code).toBe("rate_limit_exceeded");
    });
    expect(d).toEqual({ requests: 1, "faulted.status": 1 });
  });

  it("answers 503 with a configured retry-after, and 5xx without one by default", async () => {
    emu.setFault({ kind: "status", status: 503, retryAfterSeconds: 7, message: "warming up" });
    const a = await postChat(emu.url, chatRequest("a"));
    expect(a.status).toBe(503);
    expect(a.headers.get("retry-after")).toBe("7");
    expect(await errorBody(a)).toEqual({
      message: "warming up",
      type: "server_error",
      param: null,
      code: "service_unavailable",
    });
    for (const status of [500, 502, 504]) {
      emu.setFault({ kind: "status", status });
      const res = await postChat(emu.url, chatRequest("a"));
      expect(res.status).toBe(status);
      expect(res.headers.get("retry-after")).toBeNull();
      expect((await errorBody(res)).type).toBe("server_error");
    }
  });

  it("with a marker, takes only the prompts that contain it (chat and completions)", async () => {
    emu.setFault({ kind: "status", status: 500, match: "POISON-7f3a" });
    const d = await delta(async () => {
      expect((await postChat(emu.url, chatRequest("tell me about POISON-7f3a please"))).status).toBe(500);
      const clean = await postChat(emu.url, chatRequest("tell me about something else"));
      expect(clean.status).toBe(200);
      expect(((await clean.json()) as { choices: unknown[] }).choices).toHaveLength(1);
      const completion = (prompt: string): Promise<Response> =>
        fetch(`${emu.url}/v1/completions`, {
          method: "POST",
          body: JSON.stringify({ model: TEST_MODEL, prompt, max_tokens: 2 }),
        });
      expect((await completion("x POISON-7f3a y")).status).toBe(500);
      expect((await completion("x y")).status).toBe(200);
    });
    expect(d).toEqual({ requests: 4, served: 2, "faulted.status": 2 });
  });

  it("takes a seeded share of requests, the same ones for the same seed, and draws only for prompts in scope", async () => {
    const pattern = async (spec: FaultSpec, interleave: boolean): Promise<string> => {
      emu.setFault(spec);
      let out = "";
      for (let i = 0; i < 24; i++) {
        if (interleave) expect((await postChat(emu.url, chatRequest(`clean ${i}`))).status).toBe(200);
        const res = await postChat(emu.url, chatRequest(`poison-marker ${i}`));
        await res.arrayBuffer();
        out += res.status === 503 ? "x" : ".";
      }
      return out;
    };
    const spec: FaultSpec = {
      kind: "status",
      status: 503,
      probability: 0.5,
      seed: 42,
      match: "poison-marker",
    };
    const first = await pattern(spec, false);
    expect(first).toMatch(/x/);
    expect(first).toMatch(/\./);
    // Reproducible: same seed, same requests faulted, whatever other traffic runs in between.
    expect(await pattern(spec, false)).toBe(first);
    expect(await pattern(spec, true)).toBe(first);
    expect(await pattern({ ...spec, seed: 43 }, false)).not.toBe(first);
  });
});

describe("hang", () => {
  it("sends nothing, and frees the request when the client aborts", async () => {
    emu.setFault({ kind: "hang" });
    const d = await delta(async () => {
      const ac = new AbortController();
      const pending = postChat(emu.url, chatRequest("a", { stream: true }), ac.signal);
      await until("the hung request to be held", () => stats().held === 1);
      // Not even headers.
      expect(await settlesWithin(pending, 150)).toBe("pending");
      ac.abort();
      await expect(pending).rejects.toThrow();
      await until("the hung request to be freed", () => stats().held === 0);
    });
    expect(d).toEqual({ requests: 1, "faulted.hang": 1, abandoned: 1 });
    expect(emu.metrics().running).toBe(0);
  });

  it("lets hung requests through, served normally, when the fault is cleared", async () => {
    emu.setFault({ kind: "hang" });
    const d = await delta(async () => {
      const pending = postChat(emu.url, chatRequest("wait for me"));
      await until("the hung request to be held", () => stats().held === 1);
      emu.setFault(null);
      const res = await pending;
      expect(res.status).toBe(200);
      expect(((await res.json()) as { object: string }).object).toBe("chat.completion");
    });
    expect(d).toEqual({ requests: 1, "faulted.hang": 1, released: 1, served: 1 });
  });
});

describe("stall", () => {
  it("sends headers and N content chunks, then nothing, until the client leaves", async () => {
    emu.setFault({ kind: "stall", afterChunks: 2 });
    const d = await delta(async () => {
      const ac = new AbortController();
      const res = await postChat(emu.url, chatRequest("a", { stream: true }), ac.signal);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      // Role chunk + 2 content chunks arrive; the fourth read never completes.
      const head = await readSse(res, 3);
      expect(head.error).toBeUndefined();
      expect(contentOf(head.events)).toHaveLength(2);
      expect(head.events[0]!.object).toBe("chat.completion.chunk");
      const reader = res.body!.getReader();
      expect(await settlesWithin(reader.read(), 150)).toBe("pending");
      ac.abort();
      await until("the stalled stream to be freed", () => stats().held === 0);
    });
    expect(d).toEqual({ requests: 1, "faulted.stall": 1, abandoned: 1 });
  });

  it("paces its chunks and leaves no timer behind when the client leaves mid-way", async () => {
    emu.setFault({ kind: "stall", afterChunks: 1000, chunkIntervalMs: 20 });
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const ac = new AbortController();
    const res = await postChat(emu.url, chatRequest("a", { stream: true }), ac.signal);
    const t0 = performance.now();
    const head = await readSse(res, 4);
    expect(performance.now() - t0).toBeGreaterThan(30); // 3 content chunks, 20 ms apart
    expect(contentOf(head.events)).toHaveLength(3);
    const during = timers();
    ac.abort();
    await until("the stalled stream to be freed", () => stats().held === 0);
    expect(timers()).toBeLessThan(during);
  });

  it("stalls a JSON (non-streamed) request after its headers", async () => {
    emu.setFault({ kind: "stall" });
    const ac = new AbortController();
    const res = await postChat(emu.url, chatRequest("a"), ac.signal);
    expect(res.status).toBe(200);
    expect(await settlesWithin(res.text(), 150)).toBe("pending");
    ac.abort();
    await until("the stalled answer to be freed", () => stats().held === 0);
  });

  it("closes stalled streams when the fault is cleared", async () => {
    emu.setFault({ kind: "stall", afterChunks: 1 });
    const res = await postChat(emu.url, chatRequest("a", { stream: true }));
    const reading = readSse(res);
    await until("the stalled stream to be held", () => stats().held === 1);
    emu.setFault(null);
    const read = await reading;
    expect(read.done).toBe(false);
    expect(read.error).toBeDefined();
    expect(stats().held).toBe(0);
  });
});

describe("cut", () => {
  it("sends N content chunks, then closes the connection mid-body: the client sees an error, no [DONE]", async () => {
    emu.setFault({ kind: "cut", afterChunks: 3 });
    const d = await delta(async () => {
      const res = await postChat(emu.url, chatRequest("a", { stream: true, max_tokens: 50 }));
      expect(res.status).toBe(200);
      const read = await readSse(res);
      expect(contentOf(read.events)).toHaveLength(3);
      expect(read.done).toBe(false);
      expect(read.error).toBeInstanceOf(Error);
      expect(causeCode(read.error)).toBe("UND_ERR_SOCKET");
    });
    expect(d).toEqual({ requests: 1, "faulted.cut": 1 });
    // The next request on a fresh connection is unaffected once the fault is gone.
    emu.setFault(null);
    const ok = await readSse(await postChat(emu.url, chatRequest("a", { stream: true })));
    expect(ok.done).toBe(true);
  });

  it("truncates a JSON answer", async () => {
    emu.setFault({ kind: "cut" });
    const res = await postChat(emu.url, chatRequest("a"));
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });
});

describe("reset", () => {
  it("closes the connection without a byte of answer", async () => {
    emu.setFault({ kind: "reset" });
    const err = await postChat(emu.url, chatRequest("a")).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(causeCode(err)).toBe("ECONNRESET");
    expect(stats().faulted.reset).toBeGreaterThan(0);
  });
});

describe("/health", () => {
  const health = (signal?: AbortSignal): Promise<Response> => fetch(`${emu.url}/health`, { signal });

  it("is unaffected by a fault unless told to follow it", async () => {
    emu.setFault({ kind: "status", status: 503 });
    expect((await health()).status).toBe(200);
    emu.setFault({ kind: "status", status: 503, retryAfterSeconds: 2, health: "follow" });
    const res = await health();
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("2");
  });

  it("hangs with a hung backend, and resets with a reset one", async () => {
    emu.setFault({ kind: "hang", health: "follow" });
    const ac = new AbortController();
    const hung = health(ac.signal);
    expect(await settlesWithin(hung, 150)).toBe("pending");
    ac.abort();
    await expect(hung).rejects.toThrow();
    await until("the hung probe to be freed", () => stats().held === 0);
    emu.setFault({ kind: "reset", health: "follow" });
    const err = await health().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(causeCode(err)).toBe("ECONNRESET");
  });

  it("fails on its own (503) while requests are served, until restored", async () => {
    const d = await delta(async () => {
      emu.setHealth({});
      const res = await health();
      expect(res.status).toBe(503);
      expect((await errorBody(res)).type).toBe("server_error");
      expect((await postChat(emu.url, chatRequest("a"))).status).toBe(200);
      emu.setHealth({ status: 500 });
      expect((await health()).status).toBe(500);
      emu.setHealth(null);
      expect((await health()).status).toBe(200);
    });
    expect(d).toEqual({ requests: 1, served: 1, "health.failed": 2, "health.ok": 1 });
  });
});

describe("setFault", () => {
  it("rejects a bad spec, naming the field, and keeps the fault it had", () => {
    emu.setFault({ kind: "hang", match: "x" });
    expect(() => emu.setFault({ kind: "status", status: 200 })).toThrow(/status: must be 400\.\.599/);
    expect(() => emu.setFault({ kind: "explode" } as unknown as FaultSpec)).toThrow(RangeError);
    expect(emu.state().fault).toEqual({ kind: "hang", match: "x" });
  });

  it("counts requests the emulator itself rejects, and clients that leave a served stream", async () => {
    const d = await delta(async () => {
      expect((await postChat(emu.url, "{not json")).status).toBe(400);
      const ac = new AbortController();
      const res = await postChat(emu.url, chatRequest("a", { stream: true, max_tokens: 100_000 }), ac.signal);
      await readSse(res, 2);
      ac.abort();
      await until("the abort to be seen", () => emu.metrics().running === 0);
    });
    expect(d).toEqual({ requests: 2, rejected: 1, cancelled: 1 });
  });
});
