/**
 * How many RouterDO calls of their own the relay notices cost per request, at deployed settings, in one
 * isolate (bench/results/red-team.md "relay-progress"). The workers test (overload.test.ts "burst") measures
 * the real code at a 1.5 s window; this drives the same RelayNotices (src/worker/router/relay-notices.ts) over
 * an hour of simulated traffic at UPSTREAM_FIRST_BYTE_TIMEOUT_MS = 60 s, with router-client.ts's rules:
 * a stream tells only once it has relayed for relayNoticeMs (relayNoticeMs(60 s) = 15 s), every route call to
 * the cell carries what waits, and a batch nothing carried is sent alone relayNoticeMs after it began.
 *
 *   npx tsx bench/overload/relay-notice-calls.ts
 *
 * Streams: Poisson arrivals per isolate, answers of 30-180 s (long decodes: the case the notices are for),
 * one event relayed per 250 ms tick, backends of the cell chosen at random. Seeded: the same table each run.
 */

import { seededRandom } from "../../src/routing/seeded-random";
import { RelayNotices, relayNoticeMs } from "../../src/worker/router/relay-notices";

const WINDOW_MS = 60_000;
const TICK_MS = 250;
const HOUR_MS = 3_600_000;
const BACKENDS = 8;

interface Row {
  ratePerS: number;
  requests: number;
  carried: number;
  sentAlone: number;
  calls: number;
}

function run(ratePerS: number, seed: number): Row {
  const every = relayNoticeMs(WINDOW_MS);
  const random = seededRandom(seed);
  const notices = new RelayNotices();
  const streams: { backend: string; since: number; end: number }[] = [];
  const flushes: { at: number; batch: number }[] = [];
  const row: Row = { ratePerS, requests: 0, carried: 0, sentAlone: 0, calls: 0 };
  let nextArrival = -Math.log(1 - random()) * (1000 / ratePerS);
  for (let t = 0; t < HOUR_MS; t += TICK_MS) {
    while (nextArrival <= t) {
      row.requests++;
      row.carried += notices.take("cell", t).length; // the request's route call
      const backend = `b${Math.floor(random() * BACKENDS)}`;
      streams.push({ backend, since: t, end: t + 30_000 + random() * 150_000 });
      nextArrival += -Math.log(1 - random()) * (1000 / ratePerS);
    }
    for (let i = streams.length - 1; i >= 0; i--) {
      const s = streams[i]!;
      if (s.end <= t) {
        streams.splice(i, 1);
        continue;
      }
      if (t - s.since < every) continue; // noticeRelay: only a stream relaying for relayNoticeMs tells
      const batch = notices.relayed("cell", s.backend, t, every);
      if (batch !== undefined) flushes.push({ at: t + every, batch });
    }
    while (flushes.length > 0 && flushes[0]!.at <= t) {
      const f = flushes.shift()!;
      const items = notices.takeBatch("cell", f.batch, t);
      if (items.length > 0) {
        row.calls++;
        row.sentAlone += items.length;
      }
    }
  }
  return row;
}

console.log(
  `one isolate, one cell of ${BACKENDS} backends, an hour, answers of 30-180 s, window ${WINDOW_MS} ms`,
);
console.log(
  "| requests/s per isolate | requests | notices carried on route calls | notices sent alone | calls of their own | calls per request |",
);
console.log("|---|---|---|---|---|---|");
for (const rate of [0.01, 0.05, 0.2, 1, 5]) {
  const r = run(rate, 12);
  console.log(
    `| ${rate} | ${r.requests} | ${r.carried} | ${r.sentAlone} | ${r.calls} | ${(r.calls / r.requests).toFixed(4)} |`,
  );
}
