/**
 * The fuzz pass's seeded mix of strange requests: mutated bodies and grammar
 * bodies over fetch, transport abuse over raw sockets (framing that lies,
 * bodies that stall, odd methods and paths, oversized and repeated headers,
 * wrong keys, bytes that are not HTTP), and clients that leave — before the
 * answer, mid-stream, many at once. Each case says what it is and how long
 * an answer may take; the runner (send.ts, raw.ts) judges what came back.
 */
import fc from "fast-check";
import type { Rng } from "../../../sim/workloads/prng";
import { type FuzzBody, fuzzBodies } from "../../../test/node/fuzz-bodies";
import { MODEL } from "../rig";
import { BOUND_MS, type CaseKeys, type FetchCase, type FuzzCase, pick } from "./case-types";
import { longStreamBody, mutatedBody } from "./mutations";
import { framing, methodPath, notHttp, oddHeaders, smallValidBody } from "./raw-cases";

const utf8 = new TextEncoder();

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=latin1",
  "application/json, text/html",
  "",
];

function jsonHeaders(rng: Rng, key: string): Record<string, string> {
  const ct = pick(rng, CONTENT_TYPES);
  const h: Record<string, string> = {
    authorization: `Bearer ${key}`,
    ...(ct === "" ? {} : { "content-type": ct }),
  };
  // The gateway's own request headers, with odd values: a tenant key and a request id.
  if (rng.next() < 0.15)
    h["x-prefix-cache-key"] = pick(rng, ["", "t", "%00", "k".repeat(rng.int(100, 30_000)), "ü"]);
  if (rng.next() < 0.15)
    h["x-request-id"] = pick(rng, ["", "short", "<script>", "r".repeat(rng.int(10, 20_000)), "a b c d e f"]);
  if (rng.next() < 0.05) h["content-encoding"] = pick(rng, ["gzip", "identity", "br", "x"]);
  return h;
}

function leaving(rng: Rng, keys: CaseKeys): FetchCase {
  const stream = rng.next() < 0.75;
  const { path, bytes } = longStreamBody(rng, stream, MODEL);
  const r = rng.next();
  const [label, leave] =
    r < 0.3
      ? ["leaves before the answer", { afterMs: rng.int(0, stream ? 40 : 800) }]
      : r < 0.8
        ? ["leaves mid-answer", { afterChunks: rng.int(0, 30) }]
        : ["stops reading, then leaves", { afterChunks: rng.int(1, 3), pauseMs: rng.int(500, 4000) }];
  const headers = { authorization: `Bearer ${keys.fuzzKey}`, "content-type": "application/json" };
  return {
    kind: "fetch",
    label: `${label}${stream ? "" : " (not streamed)"}`,
    method: "POST",
    path,
    headers,
    body: bytes,
    leave,
    boundMs: BOUND_MS,
  };
}

/** Grammar bodies from test/node/fuzz-bodies.ts (the workerd edge-fuzz test's scale), drawn ahead. */
export function grammarBodies(seed: number, count: number): FuzzBody[] {
  if (count === 0) return [];
  const scale = { maxRun: 20_000, maxArray: 20_000, maxDepth: 5_000, backendSafe: true, model: MODEL };
  return fc.sample(fuzzBodies(scale), { seed, numRuns: count });
}

export interface CaseSource {
  next(): FuzzCase;
}

/** The seeded mix; `grammar` supplies the grammar bodies in order. */
export function caseSource(rng: Rng, keys: CaseKeys, grammar: readonly FuzzBody[]): CaseSource {
  let g = 0;
  return {
    next(): FuzzCase {
      const r = rng.next() * 100;
      if (r < 45) {
        const m = mutatedBody(rng, MODEL);
        return {
          kind: "fetch",
          label: m.label,
          method: "POST",
          path: m.path,
          headers: jsonHeaders(rng, keys.fuzzKey),
          body: m.bytes,
          boundMs: BOUND_MS,
        };
      }
      if (r < 60 && g < grammar.length) {
        const b = grammar[g++]!;
        const path = b.kind === "chat" ? "/v1/chat/completions" : "/v1/completions";
        return {
          kind: "fetch",
          label: `grammar: ${b.label}`,
          method: "POST",
          path,
          headers: jsonHeaders(rng, keys.fuzzKey),
          body: b.bytes,
          boundMs: BOUND_MS,
        };
      }
      if (r < 66) {
        const { path, bytes } = smallValidBody(rng);
        const key = pick(rng, [
          "",
          "x",
          `sk-${"a".repeat(48)}`,
          keys.adminToken,
          `${keys.fuzzKey} `,
          keys.fuzzKey.toUpperCase(),
          "😀",
          "k".repeat(rng.int(1000, 60_000)),
        ]);
        const h: Record<string, string> = { "content-type": "application/json" };
        if (rng.next() < 0.85) h.authorization = `Bearer ${encodeURIComponent(key)}`;
        return {
          kind: "fetch",
          label: "wrong key",
          method: "POST",
          path,
          headers: h,
          body: bytes,
          boundMs: BOUND_MS,
        };
      }
      if (r < 74) return methodPath(rng, keys);
      if (r < 84) return leaving(rng, keys);
      if (r < 86) {
        const n = rng.int(10, 30);
        return {
          kind: "burst",
          label: `${n} streams, all leave`,
          streams: Array.from({ length: n }, () => leaving(rng, keys)),
          boundMs: BOUND_MS,
        };
      }
      if (r < 96) return framing(rng, keys, false);
      if (r < 98) return oddHeaders(rng, keys);
      if (r < 99.2) return notHttp(rng);
      if (r < 99.7) return framing(rng, keys, true);
      // Past the 16 MiB body cap.
      const big = utf8.encode(
        JSON.stringify({
          model: MODEL,
          max_tokens: 1,
          messages: [{ role: "user", content: "a".repeat(17 * 1024 * 1024) }],
        }),
      );
      return {
        kind: "fetch",
        label: "body past 16 MiB",
        method: "POST",
        path: "/v1/chat/completions",
        headers: jsonHeaders(rng, keys.fuzzKey),
        body: big,
        boundMs: BOUND_MS,
      };
    },
  };
}
