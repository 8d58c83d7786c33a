/**
 * index-wipe's left alone 1 (red-team.md, branch index-wipe), end to end from the request's text: the Worker's
 * own count (src/prefix/request-keys.ts, the default 32,768-token window) of a chat request, routed into
 * est-bound-2's scenario (two backends of 262,144 KV, 40 families of 2,000 tokens completed, then this request,
 * completed with the engine reporting `engineSays`, then the 40 families again: how many expect their hit).
 * Each case twice: as routed on this branch (with the count's unconfirmedTokens) and without that field,
 * which is what main's routing core reads of the same request.
 * Output: index-wipe-runs.txt.
 * Run: npx tsx bench/results/index-wipe-2/index-wipe-runs.ts
 */
import { readFileSync } from "node:fs";
import { prefixKeysForRequest } from "../../../src/prefix/request-keys";
import { encodeO200k } from "../../../src/prefix/tokenizer";
import { SETTINGS } from "../../../src/routing/defaults";
import { Router } from "../../../src/routing/router";
import { seededRandom } from "../../../src/routing/seeded-random";
import type { RouteRequest } from "../../../src/routing/types";

const keys = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);
const prose = (n: number) =>
  Array.from({ length: n }, (_, i) => `Sentence ${i} of an ordinary prompt, which the engine reads as text. `).join("");

function familiesKept(req: RouteRequest, engineSays: number | undefined): number {
  const random = seededRandom(5);
  const router = new Router(
    ["a", "b"].map((id) => ({ id, weight: 1, kvCacheTokens: 262_144 })),
    { policy: "prefix_aware", blockTokens: 16 },
  );
  const fam = (f: number) => ({ blocks: keys(10_000 * (f + 1), 125), promptTokens: 2000, outputTokens: 200 });
  let t = 0;
  const ctx = (dt: number) => ({ now: (t += dt), random });
  for (let f = 0; f < 40; f++) {
    const r = router.route(fam(f), ctx(100));
    router.complete(r.ticket, { ok: true, promptTokens: 2000, cachedTokens: 0, outputTokens: 200, ttftMs: 200 }, ctx(100));
  }
  const r = router.route(req, ctx(100));
  const says = engineSays !== undefined ? { promptTokens: engineSays } : {};
  router.complete(r.ticket, { ok: true, ...says, cachedTokens: 0, outputTokens: 100, ttftMs: 500 }, ctx(1000));
  let kept = 0;
  for (let f = 0; f < 40; f++) {
    const q = router.route(fam(f), ctx(100));
    if (q.decision.expectedCachedTokens > 0) kept++;
    router.complete(q.ticket, { ok: true, promptTokens: 2000, cachedTokens: 2000, outputTokens: 200, ttftMs: 50 }, ctx(100));
  }
  return kept;
}

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
/** The text's true o200k count: what an engine with the gateway's tokenizer reports for an honest prompt. */
const truth = (text: string) => () => encodeO200k(text, 10_000_000).tokens.length;
const honestProse = prose(13_800);
const readme7 = readme.repeat(7);
const cases: [string, string, () => number | undefined][] = [
  ["prose window, then 900,000 spaces", prose(2200) + " ".repeat(900_000), () => 20_000],
  ["the same, the engine reporting no count", prose(2200) + " ".repeat(900_000), () => undefined],
  ["900,000 spaces alone", " ".repeat(900_000), () => 8_000],
  ["prose just under L (honest; the engine's count is its o200k count)", honestProse, truth(honestProse)],
  ["the README 7 times (honest, with tables and aligned code)", readme7, truth(readme7)],
];
for (const [name, text, engine] of cases) {
  const k = prefixKeysForRequest("chat", { messages: [{ role: "user", content: text }] }, {
    model: "m",
    blockTokens: 16,
    prefixTokens: SETTINGS.PREFIX_TOKENS.default,
  });
  const req: RouteRequest = {
    blocks: k.blocks,
    promptTokens: k.promptTokens,
    outputTokens: 100,
    ...(k.unconfirmedTokens !== undefined ? { unconfirmedTokens: k.unconfirmedTokens } : {}),
  };
  const { unconfirmedTokens: _, ...without } = req;
  const says = engine();
  console.log(
    `${name}: counted ${k.promptTokens}, unconfirmed ${k.unconfirmedTokens ?? 0}, engine ${says ?? "no count"}: ` +
      `${familiesKept(req, says)} of 40 kept (without the field, as main: ${familiesKept(without, says)})`,
  );
}
