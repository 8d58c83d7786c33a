import { describe, expect, it } from "vitest";
import { fingerprint, RequestLog } from "./log";

describe("RequestLog", () => {
  it("writes one JSON line, once, with the duration from its start", () => {
    const lines: string[] = [];
    const log = new RequestLog("r1", "POST", "/v1/chat/completions", 100, (l) => lines.push(l));
    log.set({ model: "m", status: 200 });
    log.emit(130, { ttftMs: 12 });
    log.emit(500, { status: 500 });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      msg: "request",
      requestId: "r1",
      method: "POST",
      path: "/v1/chat/completions",
      arrivedAt: 100,
      model: "m",
      status: 200,
      ttftMs: 12,
      durationMs: 30,
    });
  });

  it("can be deferred to the end of a relayed stream", () => {
    const log = new RequestLog("r2", "POST", "/v1/completions", 0, () => {});
    expect(log.isDeferred).toBe(false);
    log.defer();
    expect(log.isDeferred).toBe(true);
  });

  it("fingerprints identifiers as 8 hex digits, never the value", async () => {
    const fp = await fingerprint("sk-secret-key");
    expect(fp).toMatch(/^[0-9a-f]{8}$/);
    expect(await fingerprint("sk-secret-key")).toBe(fp);
    expect(await fingerprint("sk-other-key")).not.toBe(fp);
  });
});
