/** The HTTP control endpoint: only with `control: true`, validated, never faulted itself. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ControlState } from "./fault-spec";
import { type Emulator, startEmulator } from "./server";
import { chatRequest, postChat, TEST_MODEL, tcpConnect, until } from "./test-client";

let plain: Emulator;
let ctl: Emulator;

beforeAll(async () => {
  plain = await startEmulator({ port: 0, model: TEST_MODEL, speed: 200 });
  ctl = await startEmulator({ port: 0, model: TEST_MODEL, speed: 200, control: true, apiKey: "k" });
});

afterAll(async () => {
  await plain?.close();
  await ctl?.close();
});

afterEach(async () => {
  // Restore through the handle, so one failed test does not leave a fault behind for the next.
  ctl.setFault(null);
  ctl.setHealth(null);
  if (!ctl.state().up) await ctl.start();
});

function control(method: string, path: string, body?: unknown, target = ctl): Promise<Response> {
  return fetch(`${target.url}/_control/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function state(res: Response): Promise<ControlState> {
  expect(res.headers.get("content-type")).toContain("application/json");
  return (await res.json()) as ControlState;
}

describe("without control: true", () => {
  it("answers /_control/* exactly as any unknown path", async () => {
    const unknownPath = await fetch(`${plain.url}/_elsewhere/fault`, { method: "POST", body: "{}" });
    for (const [method, path] of [
      ["GET", "fault"],
      ["POST", "fault"],
      ["DELETE", "fault"],
      ["POST", "down"],
    ] as const) {
      const res = await control(method, path, method === "POST" ? { kind: "hang" } : undefined, plain);
      expect(res.status).toBe(unknownPath.status);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        error: {
          message: `No route for ${method} /_control/${path}.`,
          type: "invalid_request_error",
          param: null,
          code: "not_found",
        },
      });
    }
    expect(plain.state().fault).toBeNull();
    // A control-less emulator serves normally.
    expect((await postChat(plain.url, chatRequest("a"))).status).toBe(200);
  });
});

describe("with control: true", () => {
  it("sets, reports and clears a fault over HTTP", async () => {
    const empty = await state(await control("GET", "fault"));
    expect(empty.fault).toBeNull();
    expect(empty.health).toBeNull();
    expect(empty.up).toBe(true);
    const set = await control("POST", "fault", { kind: "status", status: 502, match: "bad-apple" });
    expect(set.status).toBe(200);
    expect((await state(set)).fault).toEqual({ kind: "status", status: 502, match: "bad-apple" });
    const auth = { authorization: "Bearer k", "content-type": "application/json" };
    const ask = (user: string): Promise<Response> =>
      fetch(`${ctl.url}/v1/chat/completions`, { method: "POST", headers: auth, body: chatRequest(user) });
    expect((await ask("a bad-apple here")).status).toBe(502);
    expect((await ask("a good one")).status).toBe(200);
    const seen = await state(await control("GET", "fault"));
    expect(seen.stats.faulted.status - empty.stats.faulted.status).toBe(1);
    expect(seen.stats.served - empty.stats.served).toBe(1);
    const cleared = await control("DELETE", "fault");
    expect(cleared.status).toBe(200);
    expect((await state(cleared)).fault).toBeNull();
    expect((await ask("a bad-apple here")).status).toBe(200);
  });

  it("is never faulted itself, and needs no API key", async () => {
    for (const kind of ["reset", "hang"] as const) {
      expect((await control("POST", "fault", { kind, health: "follow" })).status).toBe(200);
      expect((await state(await control("GET", "fault"))).fault?.kind).toBe(kind);
    }
    expect((await control("DELETE", "fault")).status).toBe(200);
  });

  it("rejects bad specs with a 400 naming the field, and keeps the fault it had", async () => {
    await control("POST", "fault", { kind: "hang", match: "keep-me" });
    const cases: [unknown, RegExp][] = [
      ["{not json", /JSON/],
      [[1, 2], /spec: /],
      [{}, /kind: must be one of status, hang, stall, cut, reset/],
      [{ kind: "explode" }, /kind: must be one of/],
      [{ kind: "status", status: 200 }, /status: must be 400\.\.599/],
      [{ kind: "status", status: "500" }, /status: /],
      [
        { kind: "status", status: 500, retryAfterSeconds: 3 },
        /retryAfterSeconds: only for status 429 or 503/,
      ],
      [{ kind: "hang", probability: 0 }, /probability: must be > 0/],
      [{ kind: "hang", probability: 1.5 }, /probability: must be <= 1/],
      [{ kind: "hang", seed: 1.5 }, /seed: must be an integer/],
      [{ kind: "hang", match: "" }, /match: must be a non-empty string/],
      [{ kind: "hang", match: "x", health: "follow" }, /health: "follow" needs a fault on every request/],
      [{ kind: "stall", afterChunks: -1 }, /afterChunks: must be >= 0/],
      [{ kind: "hang", afterChunks: 2 }, /Unrecognized key: "afterChunks"/],
      [{ kind: "cut", chunkIntervalMs: 1e9 }, /chunkIntervalMs: must be <= 60000/],
    ];
    for (const [body, message] of cases) {
      const res = await control("POST", "fault", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const err = ((await res.json()) as { error: { message: string; type: string } }).error;
      expect(err.type).toBe("invalid_request_error");
      expect(err.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await state(await control("GET", "fault"))).fault).toEqual({ kind: "hang", match: "keep-me" });
    expect((await control("POST", "health", { status: 99 })).status).toBe(400);
    expect((await control("POST", "down", { ms: 0 })).status).toBe(400);
    expect((await control("POST", "down", {})).status).toBe(400);
    // Known control paths with another method, and unknown ones, are 404s like any unknown path.
    expect((await control("PUT", "fault", { kind: "hang" })).status).toBe(404);
    expect((await control("GET", "nothing-here")).status).toBe(404);
  });

  it("makes /health fail on its own and restores it", async () => {
    const set = await control("POST", "health");
    expect(set.status).toBe(200);
    expect((await state(set)).health).toEqual({});
    expect((await fetch(`${ctl.url}/health`)).status).toBe(503);
    await control("POST", "health", { status: 500 });
    expect((await fetch(`${ctl.url}/health`)).status).toBe(500);
    expect((await state(await control("DELETE", "health"))).health).toBeNull();
    expect((await fetch(`${ctl.url}/health`)).status).toBe(200);
  });

  it("takes the process down for a while (refused), then back up on the same port", async () => {
    const before = ctl.state().stats.restarts;
    const res = await control("POST", "down", { ms: 250 });
    expect(res.status).toBe(202);
    await until("the emulator to go down", () => !ctl.state().up);
    expect(await tcpConnect(ctl.port)).toBe("ECONNREFUSED");
    await until("the emulator to come back", () => ctl.state().up);
    expect((await fetch(`${ctl.url}/health`)).status).toBe(200);
    expect(ctl.state().stats.restarts).toBe(before + 1);
  });
});
