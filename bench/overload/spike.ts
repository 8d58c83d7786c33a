/**
 * A bounded traffic spike, open loop, through the OpenAI SDK (what a client sees): `--rate` requests/s for
 * `--duration-s`, then it waits for every answer (each bounded by `--timeout-s`) and stops by itself.
 * Half streamed, half not; a third long prompts (~`--long-tokens`), the rest short; every prompt unique (no
 * shared prefix: the spike is load, not cache). `--targets` is one gateway url, or several backend urls that
 * the client spreads round-robin itself (the direct arm). The SDK's own retries are off (maxRetries 0), so
 * every failure is counted as the gateway (or the backend) gave it.
 *
 *   npx tsx bench/overload/spike.ts --targets http://127.0.0.1:8792 --key K --model M --rate 3 --duration-s 60
 *     --out bench/results/overload/gw.json
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import OpenAI from "openai";

const { values: a } = parseArgs({
  options: {
    targets: { type: "string" },
    key: { type: "string" },
    model: { type: "string", default: "llama" },
    rate: { type: "string", default: "3" },
    "duration-s": { type: "string", default: "60" },
    "timeout-s": { type: "string", default: "280" },
    "long-tokens": { type: "string", default: "4000" },
    "short-tokens": { type: "string", default: "200" },
    "max-tokens": { type: "string", default: "64" },
    seed: { type: "string", default: "1" },
    out: { type: "string" },
  },
});
const targets = (a.targets ?? "").split(",").filter((t) => t !== "");
if (targets.length === 0 || a.key === undefined) throw new Error("--targets and --key are required");
const rate = Number(a.rate);
const durationS = Number(a["duration-s"]);
const timeoutMs = Number(a["timeout-s"]) * 1000;

let s = Number(a.seed) >>> 0 || 1;
const rnd = () => {
  s = (s * 1664525 + 1013904223) >>> 0;
  return s / 2 ** 32;
};
const WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river stone cloud".split(
  " ",
);
const prompt = (tokens: number, i: number) => {
  const w: string[] = [`request ${i}:`];
  for (let k = 0; k < tokens; k++) w.push(WORDS[Math.floor(rnd() * WORDS.length)]!);
  return w.join(" ");
};

const clients = targets.map(
  (baseURL) => new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: a.key, maxRetries: 0, timeout: timeoutMs }),
);

interface Rec {
  i: number;
  sentS: number;
  stream: boolean;
  long: boolean;
  outcome: "ok" | "error";
  status?: number;
  kind?: string;
  message?: string;
  ttftMs?: number;
  e2eMs: number;
  backend?: string;
  chunks?: number;
}
const recs: Rec[] = [];
const t0 = Date.now();

async function one(i: number, stream: boolean, long: boolean): Promise<void> {
  const client = clients[i % clients.length]!;
  const sent = Date.now();
  const base = {
    model: a.model!,
    messages: [
      {
        role: "user" as const,
        content: prompt(long ? Number(a["long-tokens"]) : Number(a["short-tokens"]), i),
      },
    ],
    max_tokens: Number(a["max-tokens"]),
  };
  const rec: Rec = { i, sentS: (sent - t0) / 1000, stream, long, outcome: "ok", e2eMs: 0 };
  try {
    if (stream) {
      const { data, response } = await client.chat.completions
        .create({ ...base, stream: true, stream_options: { include_usage: true } })
        .withResponse();
      rec.backend = response.headers.get("x-prefix-gateway-backend") ?? undefined;
      let chunks = 0;
      let finish: string | null | undefined;
      for await (const c of data) {
        if (rec.ttftMs === undefined && c.choices[0]?.delta?.content) rec.ttftMs = Date.now() - sent;
        if (c.choices[0]?.delta?.content) chunks++;
        if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
      }
      rec.chunks = chunks;
      if (finish === undefined) throw new Error("stream ended without a finish_reason");
    } else {
      const { data, response } = await client.chat.completions.create(base).withResponse();
      rec.backend = response.headers.get("x-prefix-gateway-backend") ?? undefined;
      if (!data.choices[0]?.message) throw new Error("no message");
      rec.ttftMs = Date.now() - sent;
    }
  } catch (err) {
    rec.outcome = "error";
    const e = err as { status?: number; code?: string; type?: string; message?: string; name?: string };
    rec.status = e.status;
    rec.kind = `${e.name ?? "Error"}${e.code ? `:${e.code}` : e.type ? `:${e.type}` : ""}`;
    rec.message = (e.message ?? String(err)).slice(0, 200);
  }
  rec.e2eMs = Date.now() - sent;
  recs.push(rec);
}

const jobs: Promise<void>[] = [];
const n = Math.round(rate * durationS);
for (let i = 0; i < n; i++) {
  const due = t0 + (i * 1000) / rate;
  const wait = due - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  jobs.push(one(i, i % 2 === 0, i % 3 === 0));
}
const ticker = setInterval(() => {
  process.stderr.write(`t=${Math.round((Date.now() - t0) / 1000)}s done ${recs.length}/${n}\n`);
}, 15000);
await Promise.all(jobs);
clearInterval(ticker);

const ok = recs.filter((r) => r.outcome === "ok");
const q = (xs: number[], p: number) => {
  const v = xs.slice().sort((x, y) => x - y);
  return v.length === 0 ? 0 : v[Math.min(v.length - 1, Math.floor(p * v.length))]!;
};
const byKind = new Map<string, number>();
for (const r of recs)
  if (r.outcome === "error") {
    const k = `${r.stream ? "stream" : "json"} ${r.status ?? "-"} ${r.kind}`;
    byKind.set(k, (byKind.get(k) ?? 0) + 1);
  }
const summary = {
  targets: targets.length,
  rate,
  durationS,
  sent: n,
  ok: ok.length,
  errors: n - ok.length,
  errorsByKind: Object.fromEntries(byKind),
  ttftP50s:
    q(
      ok.map((r) => r.ttftMs ?? 0),
      0.5,
    ) / 1000,
  ttftP99s:
    q(
      ok.map((r) => r.ttftMs ?? 0),
      0.99,
    ) / 1000,
  ttftMaxS:
    q(
      ok.map((r) => r.ttftMs ?? 0),
      1,
    ) / 1000,
  e2eMaxS:
    q(
      recs.map((r) => r.e2eMs),
      1,
    ) / 1000,
  wallS: (Date.now() - t0) / 1000,
};
console.log(JSON.stringify(summary, null, 1));
const samples = recs.filter((r) => r.outcome === "error").slice(0, 5);
for (const r of samples) console.log(JSON.stringify(r));
if (a.out !== undefined) writeFileSync(a.out, JSON.stringify({ summary, recs }, null, 1));
