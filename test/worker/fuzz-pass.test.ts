/**
 * The fuzz pass's property, kept in CI (bench/results/fuzz-pass.md runs it at
 * length over HTTP): while well-formed streaming clients run, a fixed seed's
 * few hundred mutated bodies (bench/faults/fuzz/mutations.ts) and clients
 * that leave mid-answer go through the real Worker, RouterDO and
 * KeyLimiterDO to real emulators. Then:
 * - every well-formed stream is whole (`[DONE]`, no error event) and says
 *   exactly what the same request got when sent alone to a backend;
 * - every mutated body is answered in time with a 2xx, or a 4xx in OpenAI's
 *   error shape — never a 5xx — and no answer names a backend's address or
 *   key or holds a stack trace;
 * - afterwards nothing is in flight (leases, the key's slots), no backend is
 *   out of rotation and none was ejected.
 */
import { describe, expect, it } from "vitest";
import { longStreamBody, mutatedBody } from "../../bench/faults/fuzz/mutations";
import { parseSse } from "../../bench/faults/fuzz/sse-answer";
import { Rng } from "../../sim/workloads/prng";
import {
  authHeaders,
  BACKEND_KEY,
  backendUrl,
  CLIENT_KEY,
  chatAndSettle,
  chatBody,
  gateway,
  keyInflightReaches,
  longPrompt,
  MODEL,
  poolStats,
  settle,
} from "./helpers";

const SEED = 20261201;
const MUTANTS = 200;
const LEAVERS = 20;
const FUZZ_CONCURRENCY = 8;
const STEADY_CLIENTS = 3;
/** A fuzzed request that has not answered by then is a hang. */
const ANSWER_WITHIN_MS = 10_000;

const BACKEND_IDS = ["emu-1", "emu-2", "emu-3", "emu-4"];
const STACK = /\n\s+at |\.ts:\d+:\d+|node_modules\//;

/** Strings no answer may hold: the backends' addresses and key. */
function needles(): string[] {
  return [BACKEND_KEY, ...BACKEND_IDS.map((id) => new URL(backendUrl(id)).host)];
}

function steadyBody(i: number): string {
  const shared = longPrompt(`fuzz-pass-system-${i % 2}`, 200);
  return JSON.stringify({
    model: MODEL,
    stream: true,
    max_tokens: 12 + i,
    ...(i % 2 === 0 ? { stream_options: { include_usage: true } } : {}),
    messages: [
      { role: "system", content: shared },
      { role: "user", content: `question ${i}` },
    ],
  });
}

/** The text of each choice when the body is sent alone, straight to a backend. */
async function alone(body: string): Promise<ReadonlyMap<number, string>> {
  const res = await fetch(`${backendUrl("emu-1")}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${BACKEND_KEY}`, "content-type": "application/json" },
    body,
  });
  const sse = parseSse(await res.text());
  expect(sse.done).toBe(true);
  return sse.text;
}

async function withDeadline<T>(label: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${label}: no answer within ${ANSWER_WITHIN_MS} ms`)),
      ANSWER_WITHIN_MS,
    );
  });
  try {
    return await Promise.race([p, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** What is wrong with one fuzzed answer (empty when nothing). */
async function judgeMutant(label: string, res: Response, secrets: readonly string[]): Promise<string[]> {
  const text = await withDeadline(label, res.text());
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`${res.status}: ${text.slice(0, 200)}`);
  else if (res.status >= 400) {
    let e: { message?: unknown; type?: unknown } | undefined;
    try {
      e = (JSON.parse(text) as { error?: typeof e }).error;
    } catch {
      e = undefined;
    }
    if (typeof e?.message !== "string" || typeof e.type !== "string")
      problems.push(`${res.status} without an OpenAI error body: ${text.slice(0, 200)}`);
  } else if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const sse = parseSse(text);
    if (!sse.done || sse.malformed > 0 || sse.error !== undefined) problems.push("200 stream not whole");
  }
  for (const n of secrets) if (text.includes(n)) problems.push(`leaks ${n}`);
  if (STACK.test(text)) problems.push("holds a stack trace");
  return problems.map((p) => `${label}: ${p}`);
}

describe("fuzz pass (workerd): strange requests beside well-formed streams", () => {
  it("never costs a well-formed client its answer, answers every mutant in OpenAI's shape, leaves nothing held", async () => {
    const secrets = needles();
    const steadyBodies = Array.from({ length: STEADY_CLIENTS * 2 }, (_, i) => steadyBody(i));
    const refs = await Promise.all(steadyBodies.map(alone));
    // The pool's RouterDO answers stats once a request has reached it.
    await chatAndSettle(chatBody("fuzz-pass warm-up", "hi"));
    const ejectionsBefore = (await poolStats()).usage.ejections;

    let fuzzing = true;
    let steadyRuns = 0;
    const steadyProblems: string[] = [];
    const steady = async (c: number): Promise<void> => {
      for (let k = 0; fuzzing || k === 0; k++) {
        const i = (c + k * STEADY_CLIENTS) % steadyBodies.length;
        const res = await gateway("/v1/chat/completions", {
          method: "POST",
          headers: authHeaders(),
          body: steadyBodies[i],
        });
        const sse = parseSse(await res.text());
        steadyRuns++;
        const whole = res.status === 200 && sse.done && sse.malformed === 0 && sse.error === undefined;
        if (!whole)
          steadyProblems.push(`steady ${c}/${k}: status ${res.status}, done ${sse.done}, error ${sse.error}`);
        else if (JSON.stringify([...sse.text]) !== JSON.stringify([...refs[i]!]))
          steadyProblems.push(`steady ${c}/${k}: text differs from the request sent alone`);
      }
    };

    const rng = new Rng(`fuzz-pass/${SEED}`);
    const cases = [
      ...Array.from({ length: MUTANTS }, () => ({ leave: false, ...mutatedBody(rng, MODEL) })),
      ...Array.from({ length: LEAVERS }, () => ({
        leave: true,
        label: "leaves mid-answer",
        ...longStreamBody(rng, rng.next() < 0.75, MODEL),
      })),
    ];
    const statuses = new Map<number, number>();
    const fuzzProblems: string[] = [];
    let next = 0;
    const fuzzer = async (): Promise<void> => {
      while (next < cases.length) {
        const c = cases[next++]!;
        const init = { method: "POST", headers: authHeaders(), body: c.bytes as Uint8Array<ArrayBuffer> };
        const res = await withDeadline(c.label, gateway(c.path, init));
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (c.leave && res.status === 200 && res.body !== null) {
          const reader = res.body.getReader();
          for (let k = rng.int(0, 8); k > 0; k--) if ((await reader.read()).done) break;
          await reader.cancel();
          continue;
        }
        fuzzProblems.push(...(await judgeMutant(c.label, res, secrets)));
      }
    };
    const steadyDone = Promise.all(Array.from({ length: STEADY_CLIENTS }, (_, c) => steady(c)));
    await Promise.all(Array.from({ length: FUZZ_CONCURRENCY }, () => fuzzer()));
    fuzzing = false;
    await steadyDone;

    expect(steadyProblems).toEqual([]);
    expect(fuzzProblems).toEqual([]);
    // Both sides were reached: bodies a backend served, and bodies the edge refused.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(20);
    expect(steadyRuns).toBeGreaterThanOrEqual(STEADY_CLIENTS);

    await settle(MODEL, 10_000);
    await keyInflightReaches(CLIENT_KEY, 0, 10_000);
    const after = await poolStats();
    expect(after.backends.filter((b) => b.inflight > 0 || !b.healthy)).toEqual([]);
    expect(after.usage.ejections).toBe(ejectionsBefore);
    expect(after.leases).toBe(0);
  }, 30_000);
});
