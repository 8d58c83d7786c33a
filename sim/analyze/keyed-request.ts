/**
 * One input object → the requests it holds, each as analyze sees it: a
 * chain of prefix keys with the tokens each covers, the tenant, the arrival
 * time, and (built only when asked) the request the simulator replays.
 *
 * Keys per format:
 * - Mooncake: one per hash id (512 tokens, the last block possibly
 *   partial), chained with blockKeysFromIds;
 * - OpenAI logs: one per full 16-token block of the o200k tokens, seeded by
 *   model and tenant exactly as the gateway seeds them (requestBlockKeys);
 * - the gateway's own lines: the digest it logged, one key per `prefixEvery`
 *   tokens of the keyed prefix (256 at the default PREFIX_TOKENS of 32768).
 * Key j covers the first min((j + 1) · every, promptTokens) tokens.
 *
 * Tenants are shown as the gateway logs them, an 8-hex fingerprint
 * (SHA-256), so an OpenAI log's prompt_cache_key and the gateway's line for
 * the same tenant agree, and no key is printed.
 */
import { createHash } from "node:crypto";
import { blockKeysFromIds, chainSeed } from "../../src/prefix/block-keys";
import {
  type GatewayRecord,
  gatewayLines,
  gatewayWorkloadRequest,
  looksLikeGatewayLog,
} from "../workloads/gateway-log";
import { MOONCAKE_BLOCK_TOKENS } from "../workloads/mooncake";
import { loadTokenizer, OPENAI_LOG_BLOCK_TOKENS } from "../workloads/openai-log";
import { DEFAULT_MODEL, requestBlockKeys } from "../workloads/segments";
import { traceRecordRequest } from "../workloads/trace-file";
import type { WorkloadRequest } from "../workloads/types";

export type InputFormat = "mooncake" | "openai" | "gateway";

export interface KeyedRequest {
  readonly format: InputFormat;
  /** ms: epoch ms (gateway, OpenAI logs with absolute times) or from the start of the trace. */
  readonly arrivalMs: number;
  readonly promptTokens: number;
  /** Tenant fingerprint, "" for none. */
  readonly tenant: string;
  readonly keys: ArrayLike<number>;
  /** Tokens per key (the last may cover fewer: see tokensAt). */
  readonly every: number;
  /** The text of the first `tokens` prompt tokens, when the log has text. */
  readonly prefixText?: (tokens: number) => string;
  /** The request for the simulator (for the few requests that are replayed). */
  workload(): WorkloadRequest;
}

/** Tokens covered by the first j + 1 keys of a request. */
export function tokensAt(r: KeyedRequest, j: number): number {
  return Math.min((j + 1) * r.every, r.promptTokens);
}

/** The gateway's tenant fingerprint (src/worker/log.ts: the first 8 hex of SHA-256). */
export function tenantFingerprint(tenant: string): string {
  return createHash("sha256").update(tenant, "utf8").digest("hex").slice(0, 8);
}

export type Parsed =
  | { readonly kind: "request"; readonly request: KeyedRequest }
  | { readonly kind: "malformed"; readonly reason: string }
  | { readonly kind: "ignored" };

function fromGateway(r: GatewayRecord): KeyedRequest {
  return {
    format: "gateway",
    arrivalMs: r.arrivalMs,
    promptTokens: r.promptTokens,
    tenant: r.tenant ?? "",
    keys: r.keys,
    every: r.every,
    workload: () => gatewayWorkloadRequest(r),
  };
}

async function fromTrace(o: Record<string, unknown>): Promise<Parsed> {
  const t = await traceRecordRequest(o);
  if (typeof t === "string") return { kind: "malformed", reason: t };
  const req = t.request;
  if (t.format === "mooncake")
    return {
      kind: "request",
      request: {
        format: "mooncake",
        arrivalMs: req.arrivalMs,
        promptTokens: req.promptTokens,
        tenant: "",
        keys: blockKeysFromIds(o.hash_ids as number[], chainSeed(DEFAULT_MODEL)),
        every: MOONCAKE_BLOCK_TOKENS,
        workload: () => req,
      },
    };
  if (req.prompt.kind !== "tokens") throw new Error("an OpenAI log request without token ids");
  const tokens = req.prompt.tokens;
  const enc = await loadTokenizer();
  return {
    kind: "request",
    request: {
      format: "openai",
      arrivalMs: req.arrivalMs,
      promptTokens: req.promptTokens,
      tenant: req.tenant === undefined ? "" : tenantFingerprint(req.tenant),
      keys: requestBlockKeys(req, OPENAI_LOG_BLOCK_TOKENS),
      every: OPENAI_LOG_BLOCK_TOKENS,
      prefixText: (n) => enc.decode(Array.from(tokens.subarray(0, n))),
      // The replayed request keeps its token ids, not its text.
      workload: () => ({ ...req, prompt: { kind: "tokens", tokens } }),
    },
  };
}

/** The requests of one parsed JSON value of the input (a tail event may, rarely, hold several). */
export async function keyedRequests(value: unknown): Promise<Parsed[]> {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return [{ kind: "malformed", reason: "not a JSON object" }];
  const o = value as Record<string, unknown>;
  if (!looksLikeGatewayLog(o)) return [await fromTrace(o)];
  return gatewayLines(o).map((g) =>
    g.kind === "request" ? { kind: "request", request: fromGateway(g.record) } : g,
  );
}
