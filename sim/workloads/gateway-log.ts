/**
 * The gateway's own request log, as `wrangler tail --format json` prints it:
 * one JSON object per tail event, the gateway's line a JSON string in
 * `.logs[].message[0]` with `"msg":"request"` (src/worker/log.ts). A bare
 * line (the string itself, as `jq '.logs[].message[0] | fromjson'` gives
 * it) is read the same way.
 *
 * A line carries no prompt text: its prefix is the digest of its block-key
 * chain (`prefixKeys`, one key per `prefixEvery` tokens,
 * src/prefix/chain-digest.ts), plus `promptTokens`, the tenant's
 * fingerprint, `arrivedAt` (epoch ms; older lines fall back on the tail
 * event's timestamp) and `maxTokens` (absent: DEFAULT_OUTPUT_TOKENS, as for
 * OpenAI logs).
 *
 * What is not a request to the fleet is ignored, not malformed: tail events
 * without a gateway request line (the RouterDO's alarms, other scripts), and
 * request lines that never reached a backend's prompt (/healthz, a 401 or 429
 * before the body was read). An inference line without a digest (a gateway
 * from before the digest was logged) is malformed: it cannot be analysed.
 */
import { readChainDigest } from "../../src/prefix/chain-digest";
import { DEFAULT_OUTPUT_TOKENS } from "./openai-log";
import type { Segment, WorkloadRequest } from "./types";

/** One inference request read from a gateway log line. */
export interface GatewayRecord {
  /** Epoch ms. */
  readonly arrivalMs: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  readonly model?: string;
  /** The tenant key's 8-hex fingerprint, as the gateway logs it. */
  readonly tenant?: string;
  readonly requestId: string;
  /** The digest's keys: key j covers the first (j + 1) · every tokens. */
  readonly keys: readonly number[];
  readonly every: number;
}

export type GatewayLine =
  | { readonly kind: "request"; readonly record: GatewayRecord }
  | { readonly kind: "malformed"; readonly reason: string }
  | { readonly kind: "ignored" };

const INFERENCE_PATHS = new Set(["/v1/chat/completions", "/v1/completions"]);

/** True for a tail event (it has `logs`) or a bare gateway line (`msg: "request"`). */
export function looksLikeGatewayLog(o: Record<string, unknown>): boolean {
  return Array.isArray(o.logs) || o.msg === "request";
}

function finiteNumber(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** A gateway request line → a record, or why it cannot be one. */
export function gatewayRecord(line: Record<string, unknown>, fallbackArrivalMs?: number): GatewayLine {
  if (typeof line.path !== "string" || !INFERENCE_PATHS.has(line.path)) return { kind: "ignored" };
  const promptTokens = line.promptTokens;
  if (promptTokens === undefined) return { kind: "ignored" };
  if (typeof promptTokens !== "number" || !Number.isInteger(promptTokens) || promptTokens < 1)
    return { kind: "malformed", reason: "promptTokens must be a positive integer" };
  const digest = readChainDigest(line);
  if (typeof digest === "string") return { kind: "malformed", reason: digest };
  const arrivalMs = finiteNumber(line.arrivedAt) ?? fallbackArrivalMs;
  if (arrivalMs === undefined || arrivalMs < 0)
    return { kind: "malformed", reason: "no arrival time (arrivedAt or the tail event's timestamp)" };
  const maxTokens = line.maxTokens;
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && Number(maxTokens) >= 0))
    return { kind: "malformed", reason: "maxTokens must be a non-negative integer" };
  return {
    kind: "request",
    record: {
      arrivalMs,
      promptTokens,
      outputTokens: typeof maxTokens === "number" ? maxTokens : DEFAULT_OUTPUT_TOKENS,
      ...(typeof line.model === "string" ? { model: line.model } : {}),
      ...(typeof line.tenant === "string" && line.tenant !== "" ? { tenant: line.tenant } : {}),
      requestId: typeof line.requestId === "string" ? line.requestId : "",
      keys: digest.keys,
      every: digest.every,
    },
  };
}

/** Parses one tail message: the gateway's request line, or null when the message is something else. */
function requestLineOf(message: unknown): Record<string, unknown> | string | null {
  if (typeof message !== "string" || !message.includes('"msg":"request"')) return null;
  try {
    const o: unknown = JSON.parse(message);
    if (o !== null && typeof o === "object" && (o as { msg?: unknown }).msg === "request")
      return o as Record<string, unknown>;
    return null;
  } catch {
    // Logpush and Workers Logs truncate long events; a cut gateway line is damage, not noise.
    return "a gateway request line that is not valid JSON (truncated?)";
  }
}

/**
 * Every gateway request of one tail event or bare line; a single `ignored`
 * when it holds none.
 */
export function gatewayLines(o: Record<string, unknown>): GatewayLine[] {
  if (o.msg === "request") return [gatewayRecord(o)];
  const out: GatewayLine[] = [];
  const eventAt = finiteNumber(o.eventTimestamp);
  for (const entry of o.logs as unknown[]) {
    if (entry === null || typeof entry !== "object") continue;
    const { message, timestamp } = entry as { message?: unknown; timestamp?: unknown };
    if (!Array.isArray(message)) continue;
    const line = requestLineOf(message[0]);
    if (line === null) continue;
    if (typeof line === "string") out.push({ kind: "malformed", reason: line });
    else out.push(gatewayRecord(line, eventAt ?? finiteNumber(timestamp)));
  }
  return out.length > 0 ? out : [{ kind: "ignored" }];
}

/**
 * The record as the simulator takes it: one segment per digest key (equal
 * keys, equal tokens), then the rest of the prompt as a segment of its own.
 * Keys past `promptTokens` are dropped (the backend's token count, which
 * the line reports when it has one, can be below the gateway's).
 */
export function gatewayWorkloadRequest(r: GatewayRecord): WorkloadRequest {
  const segments: Segment[] = [];
  let covered = 0;
  for (const k of r.keys) {
    if (covered + r.every > r.promptTokens) break;
    segments.push({ key: `gw/${k.toString(16)}`, tokens: r.every });
    covered += r.every;
  }
  if (covered < r.promptTokens)
    segments.push({ key: `gw/${r.requestId}/${r.arrivalMs}/rest`, tokens: r.promptTokens - covered });
  return {
    arrivalMs: r.arrivalMs,
    promptTokens: r.promptTokens,
    gatewayPromptTokens: r.promptTokens,
    outputTokens: r.outputTokens,
    ...(r.model !== undefined ? { model: r.model } : {}),
    ...(r.tenant !== undefined ? { tenant: r.tenant } : {}),
    prompt: { kind: "segments", segments },
  };
}
