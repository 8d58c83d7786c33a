import { describe, expect, it } from "vitest";
import { noteProgress } from "./backend-progress";
import { firstBytes, isEventStream, isRetryableStatus, retryAfterMs } from "./upstream";

const withHeaders = (headers: Record<string, string>) => new Response(null, { headers });

describe("upstream responses", () => {
  it("retries 429 and 500/502/503/504 elsewhere, nothing else", () => {
    for (const s of [429, 500, 502, 503, 504]) expect(isRetryableStatus(s), String(s)).toBe(true);
    for (const s of [200, 400, 401, 404, 413, 501, 505]) expect(isRetryableStatus(s), String(s)).toBe(false);
  });

  it("reads retry-after as delta-seconds or an HTTP date", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(withHeaders({ "retry-after": "3" }), now)).toBe(3000);
    expect(retryAfterMs(withHeaders({ "retry-after": " 1.5 " }), now)).toBe(1500);
    expect(retryAfterMs(withHeaders({ "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }), now)).toBe(10_000);
    expect(retryAfterMs(withHeaders({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }), now)).toBe(0);
    expect(retryAfterMs(withHeaders({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(retryAfterMs(withHeaders({}), now)).toBeUndefined();
  });

  it("knows an event stream by its content type", () => {
    expect(isEventStream(withHeaders({ "content-type": "text/event-stream; charset=utf-8" }))).toBe(true);
    expect(isEventStream(withHeaders({ "content-type": "application/json" }))).toBe(false);
  });
});

describe("firstBytes: a late first event, busy or hung", () => {
  const WINDOW = 300;
  const LEAD = 100;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** A read whose first bytes come after `ms`. */
  const lateRead = (ms: number) => sleep(ms).then(() => "first");
  /** A source that says what `answer` says, each time it is asked; `asked` counts the questions. */
  function source(answer: (backendId: string) => Promise<void>) {
    const src = {
      asked: 0,
      leadMs: LEAD,
      refresh(id: string) {
        src.asked++;
        return answer(id);
      },
    };
    return src;
  }
  const wait = (id: string, read: Promise<string>, src?: ReturnType<typeof source>) =>
    firstBytes(read, id, WINDOW, Date.now() + 10_000, new AbortController(), "the first event", src);

  it("waits past the deadline while the other view says the backend finished a request in the window", async () => {
    const src = source(async (id) => noteProgress(id, Date.now()));
    expect(await wait("fb-remote", lateRead(WINDOW * 1.5), src)).toBe("first");
    expect(src.asked).toBeGreaterThanOrEqual(1);
  });

  it("times out at the deadline when the other view's last success is older than the window", async () => {
    const src = source(async (id) => noteProgress(id, Date.now() - 10 * WINDOW));
    const started = Date.now();
    await expect(wait("fb-old", lateRead(WINDOW * 3), src)).rejects.toThrow(/took longer than 300 ms/);
    expect(Date.now() - started).toBeLessThan(WINDOW * 2);
    expect(src.asked).toBe(1);
  });

  it("an answer that comes after the deadline, or a source that fails, moves no deadline", async () => {
    for (const [id, answer] of [
      ["fb-late", () => sleep(WINDOW * 2).then(() => noteProgress("fb-late", Date.now()))],
      ["fb-throws", () => Promise.reject(new Error("object reset"))],
    ] as const) {
      const abort = new AbortController();
      const started = Date.now();
      await expect(
        firstBytes(
          lateRead(WINDOW * 3),
          id,
          WINDOW,
          Date.now() + 10_000,
          abort,
          "the first event",
          source(answer),
        ),
      ).rejects.toThrow(/took longer than 300 ms/);
      expect(Date.now() - started, id).toBeLessThan(WINDOW * 2);
      expect(abort.signal.aborted, id).toBe(true);
    }
  });

  it("does not ask when this isolate saw the backend answering in the window", async () => {
    const ticking = setInterval(() => noteProgress("fb-local", Date.now()), 40);
    try {
      const src = source(async () => {});
      expect(await wait("fb-local", lateRead(WINDOW * 1.5), src)).toBe("first");
      expect(src.asked).toBe(0);
    } finally {
      clearInterval(ticking);
    }
  });
});
