/**
 * One bounded GET of a backend's /metrics: the whole exchange — connect,
 * headers, body — within `deadlineMs`, and at most `maxBytes` of body read.
 * The body is read as a stream, line by line, into an EngineMetricsReader,
 * and the read stops (the body is cancelled) as soon as the reader has what
 * it wants: vLLM and SGLang list their scheduler gauges near the top, ahead
 * of the histograms that make up most of the text. A body past the cap is
 * read no further; what came before it still counts.
 *
 * Never throws: every failure (refused, timed out, not 200, nothing
 * readable) is a result with a reason, and the caller routes on without a
 * reading. The backend's apiKey is sent when it has one, as requests send
 * it: vLLM and SGLang serve /metrics without the key that guards /v1, but a
 * proxy in front of them may not. A redirect is never followed (the key
 * would go to an address BACKENDS did not name): a 3xx is a failed scrape.
 */
import {
  backendAuthorization,
  fetchFailure,
  isRedirect,
  refusesCredentials,
  rejectsOnAbort,
} from "../backend-http";
import { EngineMetricsReader, type EngineMetricsReading } from "./engine-metrics";

export interface FetchMetricsOptions {
  /** The whole exchange must end within this, ms. */
  readonly deadlineMs: number;
  /** Body bytes read at most. */
  readonly maxBytes: number;
  /** The fetch to use (the runtime's by default). */
  readonly fetch?: typeof fetch;
  /** The backend's BACKENDS apiKey, sent as `Authorization: Bearer`. */
  readonly apiKey?: string;
  /** Called when the response headers arrive: the moment the engine's figures describe. */
  readonly onHeaders?: () => void;
}

export type FetchMetricsResult =
  | { readonly ok: true; readonly reading: EngineMetricsReading; readonly bytes: number }
  | { readonly ok: false; readonly reason: string; readonly bytes: number };

export async function fetchEngineMetrics(url: string, o: FetchMetricsOptions): Promise<FetchMetricsResult> {
  const signal = AbortSignal.timeout(o.deadlineMs);
  let bytes = 0;
  let res: Response;
  try {
    const headers = { accept: "text/plain;version=0.0.4", ...backendAuthorization(o.apiKey) };
    res = await (o.fetch ?? fetch)(url, { signal, headers, redirect: "manual" });
  } catch (e) {
    return { ok: false, reason: fetchFailure(e, signal, "connect"), bytes };
  }
  o.onHeaders?.();
  if (res.status !== 200 || res.body === null) {
    await res.body?.cancel().catch(() => {});
    const why = isRedirect(res.status)
      ? ", a redirect (not followed)"
      : refusesCredentials(res.status)
        ? ", refused the gateway's credentials"
        : "";
    return { ok: false, reason: `HTTP ${res.status}${why}`, bytes };
  }
  const reader = new EngineMetricsReader();
  const body = res.body.getReader();
  const aborted = rejectsOnAbort(signal);
  const decoder = new TextDecoder();
  let pending = "";
  let stopped = false;
  let capped = false;
  try {
    for (;;) {
      const { value, done } = await Promise.race([body.read(), aborted]);
      if (done) break;
      let chunk = value;
      if (bytes + chunk.byteLength > o.maxBytes) {
        chunk = chunk.subarray(0, o.maxBytes - bytes);
        capped = true;
      }
      bytes += chunk.byteLength;
      pending += decoder.decode(chunk, { stream: !capped });
      const lines = pending.split("\n");
      // The last piece may be a line cut by the chunk boundary (or the cap): kept, never read as whole.
      pending = lines.pop() ?? "";
      for (const line of lines)
        if (reader.line(line)) {
          stopped = true;
          break;
        }
      if (stopped || capped) break;
    }
    if (!stopped && !capped && pending !== "") reader.line(pending);
  } catch (e) {
    await body.cancel().catch(() => {});
    return { ok: false, reason: fetchFailure(e, signal, "body"), bytes };
  }
  if (stopped || capped) await body.cancel().catch(() => {});
  const r = reader.result();
  if (!r.ok)
    return { ok: false, reason: capped ? `${r.reason} in the first ${o.maxBytes} bytes` : r.reason, bytes };
  return { ok: true, reading: r.reading, bytes };
}
