/**
 * Workload requests → what the replay sends.
 *
 * Time: workload arrivals are in model time (the time of the GPU the
 * emulators stand for, as the simulator sees it). Emulators run `speed` times
 * faster than that, so the replay compresses arrivals by the same factor:
 * wall atMs = arrivalMs / speed. The window is `durationMs` of wall time from
 * the first arrival, capped at `maxRequests`.
 *
 * Prompts: segments become text with exactly one o200k token per segment
 * token (sim/workloads/segment-text.ts), one chat message per segment:
 * the first is the system message, then user and assistant alternate by
 * position (never by count, so a prompt that extends another keeps its
 * leading messages byte for byte, roles included). Real clients resend a
 * conversation this way, which is what the gateway's per-message token memo
 * is built for. Logged requests carry their own text, as one user message.
 */
import { o200k, segmentText } from "../../sim/workloads/segment-text";
import type { WorkloadRequest } from "../../sim/workloads/types";
import type { ReplayItem } from "./replay";
import { type ChatMessage, replayBody } from "./request-body";

export interface WindowOptions {
  readonly speed: number;
  readonly durationMs: number;
  readonly maxRequests: number;
}

/** The requests that fall in the replay window, arrivals rebased to the first one (model ms). */
export function selectWindow(requests: readonly WorkloadRequest[], opts: WindowOptions): WorkloadRequest[] {
  if (!(opts.speed > 0)) throw new RangeError(`speed must be > 0, got ${opts.speed}`);
  const sorted = [...requests].sort((a, b) => a.arrivalMs - b.arrivalMs);
  const t0 = sorted[0]?.arrivalMs ?? 0;
  const out: WorkloadRequest[] = [];
  for (const r of sorted) {
    const arrivalMs = r.arrivalMs - t0;
    if (arrivalMs / opts.speed >= opts.durationMs || out.length >= opts.maxRequests) break;
    out.push({ ...r, arrivalMs });
  }
  return out;
}

export function promptMessages(req: WorkloadRequest): ChatMessage[] {
  if (req.prompt.kind === "tokens")
    return [{ role: "user", content: req.prompt.text ?? o200k().decode(Array.from(req.prompt.tokens)) }];
  const segs = req.prompt.segments;
  if (segs.length === 1) return [{ role: "user", content: segmentText(segs[0]!) }];
  return segs.map((s, i) => ({
    role: i === 0 ? "system" : i % 2 === 1 ? "user" : "assistant",
    content: segmentText(s),
  }));
}

export interface E2eItem extends ReplayItem {
  /** The workload request (model-time arrival). */
  readonly request: WorkloadRequest;
  /** JSON body of the streamed chat completion. */
  readonly body: string;
}

/**
 * Streamed chat bodies (request-body.ts): `maxTokens[i]` is what request i's
 * client sends as max_tokens (sim/client-max-tokens.ts), the true length goes
 * to the emulator as min_tokens. The emulators, like vLLM at its natural
 * end of answer, produce exactly the true length.
 */
export function buildItems(
  requests: readonly WorkloadRequest[],
  model: string,
  speed: number,
  maxTokens: readonly (number | undefined)[],
): E2eItem[] {
  if (maxTokens.length !== requests.length)
    throw new RangeError(`maxTokens: ${maxTokens.length} values for ${requests.length} requests`);
  return requests.map((request, i) => ({
    atMs: request.arrivalMs / speed,
    request,
    body: replayBody({
      model,
      messages: promptMessages(request),
      outputTokens: request.outputTokens,
      maxTokens: maxTokens[i],
      ...(request.tenant !== undefined ? { tenant: request.tenant } : {}),
    }),
  }));
}
