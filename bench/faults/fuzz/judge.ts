/**
 * The fuzz pass's rules for one answer to a strange request:
 * - never a 5xx (the fleet is healthy; a 5xx here is the input's doing);
 * - a 4xx from the Worker carries OpenAI's error body `{"error":{"message","type",…}}`;
 * - a 200 stream is well-formed and ends with `data: [DONE]`, a 200 JSON parses;
 * - nothing in the headers or body names a backend's address or key, the admin
 *   token, or a stack trace.
 * An answer the runtime gave before the Worker saw the request (no
 * x-request-id: workerd refusing a malformed HTTP message) is judged only on
 * status and leaks, and counted apart: on Cloudflare the edge answers those.
 */
import { parseSse } from "./sse-answer";

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
  readonly method: string;
  /**
   * The request used a method the runtime itself refuses before any Worker code runs (workerd: 501 for an
   * unknown or lower-case method, 500 for CONNECT without a connect() handler). Such a runtime 5xx is
   * recorded, not held against the Worker: on Cloudflare the edge answers those requests.
   */
  readonly runtimeMayRefuse?: boolean;
}

export interface Verdict {
  /** Who answered: the Worker (it sets x-request-id on every answer) or the runtime in front of it. */
  readonly origin: "worker" | "runtime";
  /** `error.code` of an OpenAI error body, when there is one. */
  readonly code?: string;
  readonly problems: readonly string[];
}

/** Strings no answer may hold: backend addresses and key, the admin token. */
export interface Secrets {
  readonly needles: readonly string[];
}

const STACK =
  /\bat (?:async )?[\w$.<>[\]]+ \((?:file:|\/|node:|[\w-]+\.[jt]s)[^)]*:\d+:\d+\)|node_modules\/|\.ts:\d+:\d+/;

export function leaks(text: string, secrets: Secrets): string[] {
  const out: string[] = [];
  for (const n of secrets.needles) if (text.includes(n)) out.push(`leaks ${JSON.stringify(n)}`);
  if (STACK.test(text)) out.push(`holds a stack trace: ${JSON.stringify(STACK.exec(text)?.[0])}`);
  return out;
}

function errorBodyProblem(body: string): { problem?: string; code?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { problem: `4xx body is not JSON: ${JSON.stringify(body.slice(0, 120))}` };
  }
  const e = (parsed as { error?: { message?: unknown; type?: unknown; code?: unknown } } | null)?.error;
  if (typeof e?.message !== "string" || typeof e.type !== "string")
    return { problem: `4xx body is not an OpenAI error: ${body.slice(0, 120)}` };
  return { code: String(e.code ?? e.type) };
}

export function judge(a: Answer, secrets: Secrets): Verdict {
  const origin = a.headers.has("x-request-id") ? "worker" : "runtime";
  const problems: string[] = [];
  let code: string | undefined;
  if (a.status >= 500) {
    if (!(origin === "runtime" && a.runtimeMayRefuse === true))
      problems.push(`${a.status} (${origin}): ${a.body.slice(0, 200)}`);
  } else if (a.status >= 400 && origin === "worker" && a.method !== "HEAD") {
    const e = errorBodyProblem(a.body);
    if (e.problem !== undefined) problems.push(e.problem);
    code = e.code;
  } else if (a.status === 200 && a.method !== "HEAD") {
    const type = a.headers.get("content-type") ?? "";
    if (type.startsWith("text/event-stream")) {
      const sse = parseSse(a.body);
      if (!sse.done) problems.push("200 stream ended without [DONE]");
      if (sse.malformed > 0) problems.push(`200 stream with ${sse.malformed} malformed events`);
      if (sse.error !== undefined) problems.push(`200 stream with an error event: ${sse.error}`);
    } else if (type.startsWith("application/json")) {
      try {
        JSON.parse(a.body);
      } catch {
        problems.push("200 JSON body does not parse");
      }
    }
  }
  let headerText = "";
  a.headers.forEach((v, k) => {
    headerText += `${k}: ${v}\n`;
  });
  problems.push(...leaks(`${headerText}${a.body}`, secrets));
  return { origin, ...(code !== undefined ? { code } : {}), problems };
}
