/**
 * What the emulator can be told to do wrong, as data: the fault spec that a
 * test sets in-process (`Emulator.setFault`) or over HTTP (`POST
 * /_control/fault`), its validation (every problem names its field), and the
 * shape of what the emulator reports back (`ControlState`). No I/O and no
 * Node APIs: the workerd test helpers import these types as well.
 *
 * A fault takes inference requests (POST /v1/chat/completions and
 * /v1/completions): all of them, or only those whose prompt text contains
 * `match` (the poison prompt), and of those a share `probability`, drawn from
 * a PRNG seeded by `seed` (restarted whenever a fault is set, so the k-th
 * matching request meets the same draw in every run).
 */
import { z } from "zod";

export const FAULT_KINDS = ["status", "hang", "stall", "cut", "reset"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Which requests a fault takes, and whether /health plays along. */
export interface FaultScope {
  /** Only requests whose prompt text contains this substring; absent: every inference request. */
  readonly match?: string;
  /** Share of the requests in scope that the fault takes, in (0, 1]. Default 1. */
  readonly probability?: number;
  /** Seed of the PRNG behind `probability`. Default 1. */
  readonly seed?: number;
  /**
   * "follow": GET /health behaves as the fault does (a hung backend's /health
   * hangs, a reset one resets, a 503 answers 503). Default "ok": /health is
   * unaffected. Only for faults without `match` (/health carries no prompt).
   * With a `probability`, probes draw from a stream of their own, so probing
   * does not change which requests are faulted.
   */
  readonly health?: "ok" | "follow";
}

/** Answers `status` with an OpenAI-style JSON error body. */
export interface StatusFault extends FaultScope {
  readonly kind: "status";
  /** 400..599. Default 503. */
  readonly status?: number;
  /** `retry-after` header, seconds; 429 and 503 only. Default 1 for 429, none for 503. */
  readonly retryAfterSeconds?: number;
  /** The error's message. Default: a short description of the status. */
  readonly message?: string;
}

/** Reads the request and never answers (no headers) until the fault is cleared or the client leaves. */
export interface HangFault extends FaultScope {
  readonly kind: "hang";
}

/**
 * Content chunks sent before a stall or a cut. A streamed request gets SSE
 * chunks; a JSON one gets its headers, and the opening of its body if
 * afterChunks > 0.
 */
interface ChunkPlan {
  /** Content chunks sent first (after the chat role chunk). Default: 0 for stall, 1 for cut. */
  readonly afterChunks?: number;
  /** Real-time gap between those chunks, ms. Default 0 (sent at once). */
  readonly chunkIntervalMs?: number;
}

/** Sends headers and `afterChunks` chunks, then nothing, keeping the connection open (an idle stream). */
export interface StallFault extends FaultScope, ChunkPlan {
  readonly kind: "stall";
}

/** Sends headers and `afterChunks` chunks, then closes the socket mid-body (a dying backend: no [DONE]). */
export interface CutFault extends FaultScope, ChunkPlan {
  readonly kind: "cut";
}

/** Reads the request, then closes the socket without a byte of answer (a backend that died on it). */
export interface ResetFault extends FaultScope {
  readonly kind: "reset";
}

export type FaultSpec = StatusFault | HangFault | StallFault | CutFault | ResetFault;

/** /health failing on its own, whatever the request fault: it answers `status` (default 503). */
export interface HealthOverride {
  readonly status?: number;
}

/** POST /_control/down: kill the emulated process now, restart it on the same port after `ms`. */
export interface DownRequest {
  /** 1..60000. */
  readonly ms: number;
}

/** What the emulator did, counted since it was started (stop/start keeps counting). */
export interface EmulatorStats {
  /** Inference requests received, faulted or not. */
  readonly requests: number;
  /** Answered 200 to the end: the whole JSON body, or the stream through `[DONE]`. */
  readonly served: number;
  /** Answered with the emulator's own error (bad request, unknown model, bad key): not a fault. */
  readonly rejected: number;
  /** Not faulted, and closed by the client before the answer ended (its engine work is aborted). */
  readonly cancelled: number;
  /** In flight when stop() killed the emulated process. */
  readonly dropped: number;
  /** Inference requests taken by a fault, by kind. */
  readonly faulted: Readonly<Record<FaultKind, number>>;
  /** Hung or stalled requests whose client closed the connection (what a gateway deadline should do). */
  readonly abandoned: number;
  /** Hung requests let go when their fault was cleared or replaced, then served normally. */
  readonly released: number;
  /** Requests (and /health probes) held right now by hang or stall: 0 once everything is freed. */
  readonly held: number;
  /** GET /metrics answered (a gateway's scrape, ENGINE_SCRAPE_MS). */
  readonly metricsScrapes: number;
  /** GET /health answered 200, and answered otherwise (the override or a followed fault). */
  readonly health: { readonly ok: number; readonly failed: number };
  /** start() after stop(): restarts of the emulated process. */
  readonly restarts: number;
}

/** The control endpoint's answer (and `Emulator.state()`). */
export interface ControlState {
  readonly fault: FaultSpec | null;
  readonly health: HealthOverride | null;
  /** False between stop() and start() (only the in-process handle can see it). */
  readonly up: boolean;
  readonly stats: EmulatorStats;
}

const scope = {
  match: z.string().min(1, "must be a non-empty string").optional(),
  probability: z.number().gt(0, "must be > 0").lte(1, "must be <= 1").optional(),
  seed: z.int("must be an integer").optional(),
  health: z.enum(["ok", "follow"]).optional(),
};
const chunks = {
  afterChunks: z
    .int("must be an integer")
    .min(0, "must be >= 0")
    .max(100_000, "must be <= 100000")
    .optional(),
  chunkIntervalMs: z.number().min(0, "must be >= 0").max(60_000, "must be <= 60000").optional(),
};
const errorStatus = z.int("must be an integer").min(400, "must be 400..599").max(599, "must be 400..599");

const faultSchema = z
  .discriminatedUnion(
    "kind",
    [
      z.strictObject({
        kind: z.literal("status"),
        status: errorStatus.optional(),
        retryAfterSeconds: z.int("must be an integer").min(0, "must be >= 0").optional(),
        message: z.string().optional(),
        ...scope,
      }),
      z.strictObject({ kind: z.literal("hang"), ...scope }),
      z.strictObject({ kind: z.literal("stall"), ...chunks, ...scope }),
      z.strictObject({ kind: z.literal("cut"), ...chunks, ...scope }),
      z.strictObject({ kind: z.literal("reset"), ...scope }),
    ],
    { error: `must be one of ${FAULT_KINDS.join(", ")}` },
  )
  .superRefine((f, ctx) => {
    if (f.kind === "status" && f.retryAfterSeconds !== undefined) {
      const status = f.status ?? 503;
      if (status !== 429 && status !== 503)
        ctx.addIssue({
          code: "custom",
          path: ["retryAfterSeconds"],
          message: `only for status 429 or 503, not ${status}`,
        });
    }
    if (f.health === "follow" && f.match !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["health"],
        message: '"follow" needs a fault on every request (no match): /health has no prompt',
      });
  }) satisfies z.ZodType<FaultSpec>;

const healthSchema = z.strictObject({ status: errorStatus.optional() }) satisfies z.ZodType<HealthOverride>;

const downSchema = z.strictObject({
  ms: z.int("must be an integer").min(1, "must be 1..60000").max(60_000, "must be 1..60000"),
}) satisfies z.ZodType<DownRequest>;

export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly message: string };

/** `["a", 2, "b"]` → `a[2].b`; the root is `spec`. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? String(p) : `.${String(p)}`;
  return out === "" ? "spec" : out;
}

function parseWith<T>(schema: z.ZodType<T>, input: unknown): Parsed<T> {
  const r = schema.safeParse(input);
  if (r.success) return { ok: true, value: r.data };
  return { ok: false, message: r.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join("; ") };
}

/** Validates a fault spec from outside (JSON over HTTP, or a caller's object); never throws. */
export function parseFaultSpec(input: unknown): Parsed<FaultSpec> {
  return parseWith(faultSchema, input);
}

/** Validates a /health override; never throws. */
export function parseHealthOverride(input: unknown): Parsed<HealthOverride> {
  return parseWith(healthSchema, input);
}

/** Validates a POST /_control/down body; never throws. */
export function parseDownRequest(input: unknown): Parsed<DownRequest> {
  return parseWith(downSchema, input);
}
