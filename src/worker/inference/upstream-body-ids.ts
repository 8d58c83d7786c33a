/**
 * Request ids a client can set in the body, made unique before the body goes
 * upstream, by the header's rule (upstream-request-id.ts).
 *
 * SGLang takes its engine's request id from the body's `rid` (ChatCompletionRequest.rid and
 * CompletionRequest.rid in python/sglang/srt/entrypoints/openai/protocol.py, handed on as
 * GenerateReqInput(rid=request.rid) by serving_chat.py / serving_completions.py); it reads no
 * X-Request-Id header (sglang#36189, open, would add one). Its tokenizer, scheduler and detokenizer
 * keep their state by rid, so a second request with a rid already running hangs or crashes the server
 * (sglang#8089, sglang#19035), or — since #19035 — is refused. Two clients that pick one rid, or one
 * client reusing a fixed one, would cost each other answers: the collision the header fix closed for
 * vLLM. `rid` may be a string or, for a batch, a list of strings; each gets the suffix. Anything else
 * is left for the engine to refuse (a 400 is not a collision).
 *
 * vLLM's body `request_id` is not touched: vLLM uses it only when no X-Request-Id header came
 * (`_base_request_id` in vllm/entrypoints/openai/engine/serving.py: the header wins), and the gateway
 * always sends one, unique.
 *
 * Only the member's value is replaced, in the text (json-members.ts): every other byte is the client's.
 */
import { replaceMemberValue } from "../request/json-members";
import { madeUnique } from "./upstream-request-id";

/** Body members an engine takes as its request id, when no header decides (see above). */
const BODY_REQUEST_ID_FIELDS = ["rid"] as const;

function uniqueValue(value: unknown, suffix: string): unknown {
  if (typeof value === "string") return madeUnique(value, suffix);
  if (Array.isArray(value) && value.every((v) => typeof v === "string"))
    return value.map((v: string) => madeUnique(v, suffix));
  return undefined;
}

/**
 * `text` (the body going upstream; `raw` is the client's body parsed) with every body request id made
 * unique with `suffix`; the text itself when it has none.
 */
export function withUniqueBodyIds(text: string, raw: Record<string, unknown>, suffix: string): string {
  let out = text;
  for (const field of BODY_REQUEST_ID_FIELDS) {
    if (!Object.hasOwn(raw, field)) continue;
    // JSON.parse keeps the last of duplicate keys, as Python's json does: that value, made unique, goes
    // into every copy.
    const unique = uniqueValue(raw[field], suffix);
    if (unique !== undefined) out = replaceMemberValue(out, field, JSON.stringify(unique));
  }
  return out;
}
