/**
 * Runs one fetch case or a burst of them against the gateway and records
 * what came back: the answer judged (judge.ts), or that the client left as
 * its case said, or that nothing came within the case's bound (a hang).
 */
import type { BurstCase, FetchCase } from "./case-types";
import { judge, type Secrets } from "./judge";

export interface CaseOutcome {
  readonly label: string;
  /** HTTP status, or what happened instead of one. */
  readonly status: number | "left" | "closed" | "timeout" | "failed";
  readonly origin?: "worker" | "runtime";
  /** error.code of a 4xx answer. */
  readonly code?: string;
  readonly ms: number;
  readonly problems: readonly string[];
  /** Our write failed (EPIPE, ECONNRESET) and the answer came anyway: a server refusing before reading all. */
  readonly writeError?: string;
  /** An upload's x-request-id when its connection closed with no answer: the gateway's log may hold one. */
  readonly unansweredId?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function sendFetch(base: string, c: FetchCase, secrets: Secrets): Promise<CaseOutcome> {
  const t0 = performance.now();
  const ac = new AbortController();
  let timedOut = false;
  let left = false;
  const bound = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, c.boundMs);
  const leaveTimer =
    c.leave?.afterMs !== undefined
      ? setTimeout(() => {
          left = true;
          ac.abort();
        }, c.leave.afterMs)
      : undefined;
  const done = (o: Omit<CaseOutcome, "label" | "ms">): CaseOutcome => ({
    label: c.label,
    ms: performance.now() - t0,
    ...o,
  });
  try {
    const res = await fetch(`${base}${c.path}`, {
      method: c.method,
      headers: c.headers,
      // Our bytes are always backed by an ArrayBuffer (TextEncoder, Uint8Array.from); the DOM type wants it said.
      ...(c.body !== undefined ? { body: c.body as Uint8Array<ArrayBuffer> } : {}),
      signal: ac.signal,
    });
    const afterChunks = c.leave?.afterChunks;
    if (afterChunks !== undefined && res.status === 200 && res.body !== null) {
      // Read a few chunks (maybe pause without reading), then leave.
      const reader = res.body.getReader();
      for (let k = 0; k < afterChunks; k++) if ((await reader.read()).done) break;
      if (c.leave?.pauseMs !== undefined) await sleep(c.leave.pauseMs);
      left = true;
      ac.abort();
      return done({
        status: "left",
        origin: res.headers.has("x-request-id") ? "worker" : "runtime",
        problems: [],
      });
    }
    const body = await res.text();
    const v = judge({ status: res.status, headers: res.headers, body, method: c.method }, secrets);
    return done({
      status: res.status,
      origin: v.origin,
      ...(v.code !== undefined ? { code: v.code } : {}),
      problems: v.problems,
    });
  } catch (err) {
    if (timedOut) return done({ status: "timeout", problems: [`no answer within ${c.boundMs} ms`] });
    if (left) return done({ status: "left", problems: [] });
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
    return done({ status: "failed", problems: [`fetch failed: ${String(err)}${cause}`] });
  } finally {
    clearTimeout(bound);
    if (leaveTimer !== undefined) clearTimeout(leaveTimer);
  }
}

/** Every stream of the burst at once; the burst's problems are its streams' problems. */
export async function sendBurst(base: string, c: BurstCase, secrets: Secrets): Promise<CaseOutcome> {
  const t0 = performance.now();
  const outcomes = await Promise.all(c.streams.map((s) => sendFetch(base, s, secrets)));
  return {
    label: c.label,
    status: "left",
    ms: performance.now() - t0,
    problems: outcomes.flatMap((o) => o.problems.map((p) => `${o.label}: ${p}`)),
  };
}
