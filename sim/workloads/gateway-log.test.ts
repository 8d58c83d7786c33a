import { describe, expect, it } from "vitest";
import { gatewayLines, gatewayRecord, gatewayWorkloadRequest, looksLikeGatewayLog } from "./gateway-log";
import { gatewayLine, tailEvent, wranglerJson } from "./test-tail-events";

const SYSTEM = Array.from({ length: 400 }, (_, i) => `rule${i % 37} of the house, number ${i}.`).join(" ");

describe("the gateway's request log lines", () => {
  it("reads a line the gateway's logger wrote, from a wrangler tail event", async () => {
    const line = await gatewayLine({
      requestId: "r-1",
      arrivedAt: 1_767_225_600_000,
      system: SYSTEM,
      user: "What is rule 3?",
      tenant: "team-a",
      maxTokens: 64,
    });
    // Printed and read back the way analyze gets it: a pretty-printed event.
    const event = JSON.parse(wranglerJson(tailEvent([line, "another console.log line"], 1_767_225_600_002)));
    expect(looksLikeGatewayLog(event)).toBe(true);
    const read = gatewayLines(event);
    expect(read).toHaveLength(1);
    const r = read[0]!;
    if (r.kind !== "request") throw new Error(JSON.stringify(r));
    const parsed = JSON.parse(line) as { promptTokens: number; keyedTokens: number; tenant: string };
    expect(r.record).toMatchObject({
      arrivalMs: 1_767_225_600_000,
      promptTokens: parsed.promptTokens,
      outputTokens: 64,
      model: "llama-3.1-8b-instruct",
      tenant: parsed.tenant,
      requestId: "r-1",
      every: 64,
    });
    expect(r.record.keys).toHaveLength(Math.floor(parsed.keyedTokens / 64));
  });

  it("gives two requests with the same system prompt the same keys, up to where they differ", async () => {
    const read = async (user: string, tenant?: string) => {
      const line = await gatewayLine({
        requestId: user,
        arrivedAt: 1,
        system: SYSTEM,
        user,
        ...(tenant !== undefined ? { tenant } : {}),
      });
      const g = gatewayRecord(JSON.parse(line));
      if (g.kind !== "request") throw new Error(JSON.stringify(g));
      return g.record.keys;
    };
    const question = (q: string) => `${q}: ${"tell me more about the rules. ".repeat(40)}`;
    const a = await read(question("first"));
    const b = await read(question("second"));
    let same = 0;
    while (same < a.length && a[same] === b[same]) same++;
    expect(same).toBeGreaterThan(20);
    expect(same).toBeLessThan(a.length);
    const otherTenant = await read(question("first"), "team-b");
    expect(otherTenant.filter((k, j) => k === a[j])).toEqual([]);
  });

  it("ignores what is not a request to the fleet, and flags lines it cannot use", () => {
    const alarm = { outcome: "ok", logs: [], eventTimestamp: 5, event: { scheduledTime: 5 } };
    expect(gatewayLines(alarm)).toEqual([{ kind: "ignored" }]);
    const healthz = JSON.stringify({
      msg: "request",
      requestId: "h",
      method: "GET",
      path: "/healthz",
      status: 200,
    });
    expect(gatewayLines(tailEvent([healthz], 5))).toEqual([{ kind: "ignored" }]);
    const refused = { msg: "request", path: "/v1/chat/completions", status: 401, arrivedAt: 5 };
    expect(gatewayRecord(refused)).toEqual({ kind: "ignored" });
    const old = { msg: "request", path: "/v1/completions", promptTokens: 900, arrivedAt: 5 };
    expect(gatewayRecord(old)).toMatchObject({
      kind: "malformed",
      reason: expect.stringMatching(/prefixKeys/),
    });
    const noTime = {
      msg: "request",
      path: "/v1/completions",
      promptTokens: 900,
      prefixKeys: "",
      prefixEvery: 64,
    };
    expect(gatewayRecord(noTime)).toMatchObject({
      kind: "malformed",
      reason: expect.stringMatching(/arrival/),
    });
    // Without arrivedAt (an older gateway), the tail event's timestamp stands in.
    expect(gatewayLines(tailEvent([JSON.stringify(noTime)], 77))).toMatchObject([
      { kind: "request", record: { arrivalMs: 77 } },
    ]);
    const cut = '{"msg":"request","requestId":"x","path":"/v1/comp<<<Logpush: message truncated>>>';
    expect(gatewayLines(tailEvent([cut], 5))).toMatchObject([{ kind: "malformed" }]);
  });

  it("replays as one segment per digest key and the rest of the prompt as its own", () => {
    const g = gatewayRecord({
      msg: "request",
      path: "/v1/chat/completions",
      requestId: "q",
      arrivedAt: 10,
      promptTokens: 150,
      prefixKeys: "0000000a0000000b0000000c",
      prefixEvery: 64,
    });
    if (g.kind !== "request") throw new Error(JSON.stringify(g));
    const w = gatewayWorkloadRequest(g.record);
    expect(w.promptTokens).toBe(150);
    // The backend counted 150 tokens: the third key (tokens 128..191) no longer fits.
    expect(w.prompt).toEqual({
      kind: "segments",
      segments: [
        { key: "gw/a", tokens: 64 },
        { key: "gw/b", tokens: 64 },
        { key: "gw/q/10/rest", tokens: 22 },
      ],
    });
  });
});
