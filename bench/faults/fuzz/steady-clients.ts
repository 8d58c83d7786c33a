/**
 * The well-formed clients of the fuzz pass: closed-loop streaming requests,
 * chat and completions, most sharing one of a few long system prompts, each
 * judged whole — HTTP 200, an event stream of well-formed events ending in
 * `data: [DONE]`, no error event, usage exactly when asked, and for every
 * choice the very text the same request got when sent alone to a backend
 * directly (the emulator's answer is a pure function of the request).
 */
import { Rng } from "../../../sim/workloads/prng";
import { segmentText } from "../../../sim/workloads/segment-text";
import { MODEL } from "../rig";
import { parseSse } from "./sse-answer";

export interface SteadyBody {
  readonly path: "/v1/chat/completions" | "/v1/completions";
  readonly json: string;
  readonly includeUsage: boolean;
  readonly n: number;
}

/** Choice index → text, from the request sent alone. */
export type Reference = ReadonlyMap<number, string>;

export interface SteadyResult {
  readonly requests: number;
  /** One line per request that was not whole and right. */
  readonly violations: readonly string[];
}

const SYSTEM_PROMPTS = 4;
const SYSTEM_TOKENS = 1024;

/** `count` bodies for seed `seed`: three in four share a system prompt, the rest stand alone. */
export function steadyBodies(seed: number, count: number): SteadyBody[] {
  const rng = new Rng(`fuzz/steady/${seed}`);
  return Array.from({ length: count }, (_, i) => {
    const shared = rng.next() < 0.75;
    const system = shared
      ? segmentText({ key: `fuzz/sys/${rng.int(0, SYSTEM_PROMPTS - 1)}`, tokens: SYSTEM_TOKENS })
      : segmentText({ key: `fuzz/own/${seed}/${i}`, tokens: rng.int(16, 256) });
    const question = segmentText({ key: `fuzz/q/${seed}/${i}`, tokens: rng.int(8, 48) });
    const includeUsage = rng.next() < 0.5;
    const n = rng.next() < 0.2 ? 2 : 1;
    const common = {
      model: MODEL,
      max_tokens: rng.int(16, 64),
      stream: true,
      ...(n > 1 ? { n } : {}),
      ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
    };
    const chat = rng.next() < 0.6;
    const json = chat
      ? JSON.stringify({
          ...common,
          messages: [
            { role: "system", content: system },
            { role: "user", content: question },
          ],
        })
      : JSON.stringify({ ...common, prompt: `${system}\n${question}` });
    return { path: chat ? "/v1/chat/completions" : "/v1/completions", json, includeUsage, n };
  });
}

async function post(url: string, key: string, body: SteadyBody, timeoutMs: number): Promise<Response> {
  return fetch(`${url}${body.path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body.json,
    signal: AbortSignal.timeout(timeoutMs),
  });
}

/** Each body sent alone, straight to one backend: the answer every run through the gateway must equal. */
export async function referenceAnswers(
  backendUrl: string,
  backendKey: string,
  bodies: readonly SteadyBody[],
): Promise<Reference[]> {
  const refs: Reference[] = [];
  for (const body of bodies) {
    const res = await post(backendUrl, backendKey, body, 30_000);
    const sse = parseSse(await res.text());
    if (res.status !== 200 || !sse.done || sse.text.size !== body.n)
      throw new Error(`reference for ${body.json.slice(0, 80)}…: status ${res.status}, not a whole stream`);
    refs.push(sse.text);
  }
  return refs;
}

/** What is wrong with one answer through the gateway, or undefined when it is whole and right. */
export async function judgeSteady(
  res: Response,
  body: SteadyBody,
  ref: Reference,
): Promise<string | undefined> {
  const text = await res.text();
  if (res.status !== 200) return `status ${res.status}: ${text.slice(0, 200)}`;
  if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream"))
    return `content-type ${res.headers.get("content-type")}`;
  const sse = parseSse(text);
  if (sse.error !== undefined) return `error event: ${sse.error}`;
  if (sse.malformed > 0) return `${sse.malformed} malformed events`;
  if (!sse.done) return "stream ended without [DONE]";
  if (sse.usage !== body.includeUsage)
    return `usage ${sse.usage ? "sent" : "missing"}, asked ${body.includeUsage}`;
  for (const [i, want] of ref) {
    if (sse.text.get(i) !== want) return `choice ${i}: text differs from the request sent alone`;
    if (!sse.finish.has(i)) return `choice ${i}: no finish_reason`;
  }
  if (sse.text.size !== ref.size) return `${sse.text.size} choices, expected ${ref.size}`;
  return undefined;
}

export interface SteadyOptions {
  readonly url: string;
  readonly apiKey: string;
  readonly bodies: readonly SteadyBody[];
  readonly refs: readonly Reference[];
  readonly clients: number;
  readonly timeoutMs: number;
}

/** Closed-loop clients until `stop()`; each lets its current request finish. */
export function startSteady(opts: SteadyOptions): { stop(): Promise<SteadyResult> } {
  let stopping = false;
  let requests = 0;
  const violations: string[] = [];
  const client = async (c: number): Promise<void> => {
    for (let k = 0; !stopping; k++) {
      const i = (c * 7 + k) % opts.bodies.length;
      const body = opts.bodies[i]!;
      requests++;
      try {
        const res = await post(opts.url, opts.apiKey, body, opts.timeoutMs);
        const wrong = await judgeSteady(res, body, opts.refs[i]!);
        if (wrong !== undefined) violations.push(`steady client ${c} request ${k} (body ${i}): ${wrong}`);
      } catch (err) {
        violations.push(`steady client ${c} request ${k} (body ${i}): ${String(err)}`);
      }
    }
  };
  const running = Array.from({ length: opts.clients }, (_, c) => client(c));
  return {
    async stop() {
      stopping = true;
      await Promise.all(running);
      return { requests, violations };
    },
  };
}
