/**
 * How far the Worker's prompt-token count is from the truth past its key
 * window. The Worker tokenizes a prompt (o200k_base) only up to
 * PREFIX_TOKENS; the rest of each text counts ceil(chars / 4)
 * (src/prefix/request-keys.ts). One measurement = one window of 4,096 o200k
 * tokens of real text: factor = ceil(chars / 4) ÷ tokens (1 = exact, > 1 the
 * Worker counts more than there are). The figure that matters is the
 * distribution of that factor: sim/request-view.ts gives our policies a tail
 * count drawn from it (TAIL_COUNT_FACTORS), so this script prints the table
 * it holds.
 *
 *   npm run bench:micro:token-estimate
 *
 * Writes bench/results/token-estimate.md. Text: files every checkout has
 * after `npm ci` (node_modules), so the figures are reproducible:
 * - docs: every README of an installed package of at least 4 KB (Markdown prose with shell and code samples);
 * - declarations: TypeScript's lib.es5.d.ts and lib.dom.d.ts (doc comments and declarations);
 * - source: TypeScript's own compiler source, typescript.js (unminified JavaScript);
 * - translations (not in the model, a sensitivity): TypeScript's diagnostic messages in 13 languages.
 * The model pools docs, declarations and source with equal weight per group.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { type ChatBody, prefixKeysForRequest } from "../../src/prefix/request-keys";
import { encodeO200k } from "../../src/prefix/tokenizer";

const WINDOW_TOKENS = 4096;
/** Windows taken from one file at most, so one big file does not stand for its group. */
const MAX_WINDOWS_PER_FILE = 64;
/** The quantiles printed for request-view.ts: 0, 5, ..., 100%. */
const QUANTILES = Array.from({ length: 21 }, (_, i) => i / 20);

interface Window {
  readonly tokens: number;
  readonly chars: number;
  readonly factor: number;
}

/** Consecutive windows of `WINDOW_TOKENS` tokens (the last, shorter one dropped when under half). */
function windows(text: string): Window[] {
  const out: Window[] = [];
  let at = 0;
  while (at < text.length && out.length < MAX_WINDOWS_PER_FILE) {
    const e = encodeO200k(text.slice(at, at + WINDOW_TOKENS * 16), WINDOW_TOKENS);
    if (e.tokens.length < WINDOW_TOKENS / 2) break;
    out.push({
      tokens: e.tokens.length,
      chars: e.charsConsumed,
      factor: Math.ceil(e.charsConsumed / 4) / e.tokens.length,
    });
    at += e.charsConsumed;
  }
  return out;
}

const LANGUAGES = ["cs", "de", "es", "fr", "it", "pl", "pt-br", "ru", "tr", "ja", "ko", "zh-cn", "zh-tw"];
const CJK = new Set(["ja", "ko", "zh-cn", "zh-tw"]);

/** The translated texts of one language (values only: the keys are English identifiers). */
function translation(lang: string): string {
  const o = JSON.parse(
    readFileSync(`node_modules/typescript/lib/${lang}/diagnosticMessages.generated.json`, "utf8"),
  ) as Record<string, string>;
  return Object.values(o).join("\n");
}

const readmes = execFileSync("find", ["node_modules", "-iname", "readme*.md", "-size", "+4k"], {
  encoding: "utf8",
})
  .trim()
  .split("\n")
  .sort();

interface Group {
  readonly name: string;
  readonly what: string;
  readonly inModel: boolean;
  readonly texts: readonly string[];
}

const groups: Group[] = [
  {
    name: "docs",
    what: `${readmes.length} package READMEs ≥ 4 KB`,
    inModel: true,
    texts: readmes.map((p) => readFileSync(p, "utf8")),
  },
  {
    name: "declarations",
    what: "lib.es5.d.ts, lib.dom.d.ts",
    inModel: true,
    texts: ["lib.es5.d.ts", "lib.dom.d.ts"].map((f) =>
      readFileSync(`node_modules/typescript/lib/${f}`, "utf8"),
    ),
  },
  {
    name: "source",
    what: "typescript.js (unminified JavaScript)",
    inModel: true,
    texts: [readFileSync("node_modules/typescript/lib/typescript.js", "utf8")],
  },
  {
    name: "translations, European",
    what: LANGUAGES.filter((l) => !CJK.has(l)).join(", "),
    inModel: false,
    texts: LANGUAGES.filter((l) => !CJK.has(l)).map(translation),
  },
  {
    name: "translations, CJK",
    what: LANGUAGES.filter((l) => CJK.has(l)).join(", "),
    inModel: false,
    texts: LANGUAGES.filter((l) => CJK.has(l)).map(translation),
  },
];

function quantile(sorted: readonly number[], q: number): number {
  const x = q * (sorted.length - 1);
  const lo = Math.floor(x);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (x - lo);
}

/** Quantiles of a mixture in which each group weighs the same, however many windows it has. */
function mixtureQuantiles(perGroup: readonly (readonly number[])[], qs: readonly number[]): number[] {
  const points = perGroup
    .flatMap((xs) => xs.map((x) => ({ x, w: 1 / (perGroup.length * xs.length) })))
    .sort((a, b) => a.x - b.x);
  return qs.map((q) => {
    if (q <= 0) return points[0]!.x;
    let acc = 0;
    for (const p of points) {
      acc += p.w;
      if (acc >= q - 1e-12) return p.x;
    }
    return points[points.length - 1]!.x;
  });
}

const fmt = (x: number, d = 3) => x.toFixed(d);
const rows: string[] = [];
const modelGroups: number[][] = [];
for (const g of groups) {
  const ws = g.texts.flatMap(windows);
  const f = ws.map((w) => w.factor).sort((a, b) => a - b);
  const chars = ws.reduce((s, w) => s + w.chars, 0);
  const tokens = ws.reduce((s, w) => s + w.tokens, 0);
  if (g.inModel) modelGroups.push(f);
  rows.push(
    `| ${g.name} | ${g.what} | ${g.inModel ? "yes" : "no"} | ${ws.length} | ${fmt(chars / tokens, 2)} | ${fmt(quantile(f, 0.05))} | ${fmt(quantile(f, 0.5))} | ${fmt(quantile(f, 0.95))} | ${fmt(chars / 4 / tokens)} |`,
  );
  console.error(rows[rows.length - 1]);
}
const table = mixtureQuantiles(modelGroups, QUANTILES);

/** The Worker itself on one long document per model group: its promptTokens against o200k's count. */
const worker: string[] = [];
for (const g of groups.filter((x) => x.inModel)) {
  const text = g.texts.join("\n\n").slice(0, 200_000);
  const trueTokens = encodeO200k(text).tokens.length;
  const body: ChatBody = { messages: [{ role: "user", content: text }] };
  const k = prefixKeysForRequest("chat", body, { model: "m", blockTokens: 16, prefixTokens: 8192 });
  const structure = prefixKeysForRequest(
    "chat",
    { messages: [{ role: "user", content: "" }] },
    {
      model: "m",
      blockTokens: 16,
      prefixTokens: 8192,
    },
  ).promptTokens;
  const tail = trueTokens - k.keyed.tokens + structure;
  worker.push(
    `| ${g.name} | ${trueTokens + structure} | ${k.keyed.tokens} | ${k.promptTokens} | ${fmt((k.promptTokens - k.keyed.tokens) / tail)} |`,
  );
}

const lines = [
  "# The Worker's prompt-token count past its key window",
  "",
  "```",
  "npm run bench:micro:token-estimate",
  "```",
  "",
  `Node ${process.version}. The Worker tokenizes a prompt with o200k_base up to \`PREFIX_TOKENS\` (8,192) and`,
  "counts the rest of each text as ceil(chars / 4) (src/prefix/request-keys.ts); the router's cost model",
  "reads that count. One measurement: a window of 4,096 o200k tokens of real text (consecutive windows,",
  `at most ${MAX_WINDOWS_PER_FILE} per file); factor = ceil(chars / 4) ÷ tokens: 1 is exact, above 1 the Worker counts`,
  "more tokens than there are.",
  "",
  "| group | text | in the model | windows | chars / token | factor p5 | p50 | p95 | pooled |",
  "|---|---|---|---:|---:|---:|---:|---:|---:|",
  ...rows,
  "",
  "The text is what a checkout has after `npm ci`, so anyone can re-measure it: developer text in English",
  "(Markdown documentation with code samples, commented declarations, program source). It stands for",
  "prompts of developer tools, agents and RAG over documentation; it does not stand for chat in other",
  "languages: on European translations ceil(chars / 4) is about as close (p5–p95 0.75–1.10), on Chinese,",
  "Japanese and Korean it counts about 0.4 of the tokens there are. No public trace says which languages a fleet serves",
  "(the Mooncake trace comes from Kimi, whose users write much Chinese, and carries no text).",
  "",
  "**The model** (sim/request-view.ts, `TAIL_COUNT_FACTORS`): the three English groups pooled, each",
  "weighing the same; a request's tokens past the window count ceil(tail × factor), the factor drawn",
  "from this distribution by a hash of the run's seed and the prompt's first block past the window",
  "(the same text past the window, the same factor). Quantiles 0, 5, …, 100%:",
  "",
  "```ts",
  `[${table.map((x) => fmt(x)).join(", ")}]`,
  "```",
  "",
  "Check through the Worker's own code (`prefixKeysForRequest`, `PREFIX_TOKENS` 8192): one chat message",
  "of each group's text (its first 200k characters); true count = o200k tokens of the text plus the",
  "message's structure tokens; tail factor = (Worker count − keyed tokens) ÷ (true count − keyed tokens).",
  "",
  "| group | true prompt tokens | keyed (exact) | Worker's promptTokens | tail factor |",
  "|---|---:|---:|---:|---:|",
  ...worker,
  "",
];
writeFileSync("bench/results/token-estimate.md", lines.join("\n"));
console.log(lines.join("\n"));
