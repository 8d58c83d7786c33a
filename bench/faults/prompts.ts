/**
 * Ordinary traffic for the fault bench: streamed chat requests that share a
 * few long system prompts, each with a question of its own and a small
 * max_tokens, as chat clients of one application send. Shared prefixes make
 * affinity matter (a backend that dies takes cached prefixes with it, and its
 * traffic must land somewhere), and short answers keep many requests in
 * flight. Seeded: client c's n-th body is the same in every run.
 */
import { Rng } from "../../sim/workloads/prng";
import { segmentText } from "../../sim/workloads/segment-text";
import { MODEL } from "./rig";

export interface TrafficShape {
  /** Distinct system prompts. */
  readonly groups: number;
  readonly systemTokens: number;
  readonly questionTokens: number;
  /** max_tokens is drawn uniformly from [minOutputTokens, maxOutputTokens]. */
  readonly minOutputTokens: number;
  readonly maxOutputTokens: number;
}

export const DEFAULT_SHAPE: TrafficShape = {
  groups: 16,
  systemTokens: 1024,
  questionTokens: 32,
  minOutputTokens: 16,
  maxOutputTokens: 64,
};

const systems = new Map<string, string>();

function systemPrompt(group: number, tokens: number): string {
  const key = `faults/sys/${group}/${tokens}`;
  let text = systems.get(key);
  if (text === undefined) {
    text = segmentText({ key, tokens });
    systems.set(key, text);
  }
  return text;
}

/** The n-th request body of client `client` (tag keeps runs' questions apart). */
export function ordinaryBody(shape: TrafficShape, tag: string, client: number, n: number): string {
  const rng = new Rng(`${tag}/${client}/${n}`);
  const group = rng.int(0, shape.groups - 1);
  return JSON.stringify({
    model: MODEL,
    messages: [
      { role: "system", content: systemPrompt(group, shape.systemTokens) },
      {
        role: "user",
        content: segmentText({ key: `faults/q/${tag}/${client}/${n}`, tokens: shape.questionTokens }),
      },
    ],
    max_tokens: rng.int(shape.minOutputTokens, shape.maxOutputTokens),
    stream: true,
    stream_options: { include_usage: true },
  });
}
