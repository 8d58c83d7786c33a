/**
 * A streamed request answered 2xx with a whole JSON error object instead of an event stream: what a hosted
 * OpenAI-compatible API, or a proxy in front of an engine, can send for a request it refuses on its content
 * (context too long, a content policy) when it does not use the status for it. That is this request's
 * answer, not the backend's failure: taken as a wrong-form answer (upstream.ts formMismatch) it was a fault
 * of every backend the request reached, so one client's requests, by their content alone, ejected healthy
 * backends for everybody (EJECT_AFTER_FAULTS in a row), and the client got a 502 naming the form instead of
 * the backend's reason.
 *
 * It is handed on in the form the client asked for: one SSE `data: {"error": …}` event, which the OpenAI SDKs
 * raise as an APIError carrying the backend's message (as for vLLM's mid-stream error event). Relayed like
 * that, the tap sees an error object inside a 2xx: a failed request and no fault (respond.ts), as the same
 * body already was for a request with `"stream": false`. A JSON body that is no error object (a completion:
 * a server that ignores `stream`) stays a wrong form and a fault.
 */
import { deadline } from "../deadline";
import { concat } from "../request/read-body";
import { isErrorObject } from "./stream-tap";

/** Error bodies are small (attempts.ts keeps as much of a failed answer's): past this it is no error object. */
export const MAX_ERROR_ANSWER_BYTES = 64 * 1024;

const UTF8 = new TextEncoder();

/**
 * The rest of the body after `first`, read to its end (each read within `idleMs`, the whole by `endAt`, epoch
 * ms, and at most MAX_ERROR_ANSWER_BYTES), as an SSE error event when it is one JSON error object; undefined
 * otherwise (not JSON, no error object, too long, stalled, late, broken). The reader is read, not cancelled:
 * the caller does. `endAt` matters: the client has no header yet, and a body trickled a byte per `idleMs`
 * would otherwise hold it up to 64 Ki idle periods (UPSTREAM_IDLE_TIMEOUT_MS 20 s: two weeks).
 */
export async function errorAnswerEvent(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  first: Uint8Array,
  idleMs: number,
  endAt: number,
): Promise<Uint8Array | undefined> {
  const parts = [first];
  let size = first.byteLength;
  try {
    while (size <= MAX_ERROR_ANSWER_BYTES) {
      const ms = Math.min(idleMs, endAt - Date.now());
      if (ms <= 0) return undefined;
      const r = await deadline(reader.read(), ms, () => undefined);
      if (r === undefined) return undefined;
      if (r.done) return eventOf(concat(parts, size));
      parts.push(r.value);
      size += r.value.byteLength;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

function eventOf(body: Uint8Array): Uint8Array | undefined {
  let obj: unknown;
  try {
    obj = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return undefined;
  }
  if (!isErrorObject(obj)) return undefined;
  // The error object as the backend wrote it, alone: what the SDKs read (`data.error`), nothing else of the body.
  const error = (obj as { error: unknown }).error;
  return UTF8.encode(`data: ${JSON.stringify({ error })}\n\n`);
}
