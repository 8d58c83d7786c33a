// red-team-5: the openai SDK against a local gateway (wrangler dev on 127.0.0.1:8959, key k1, model "llama").
// Run from the repo root: npx tsx bench/results/red-team-5/sdk-probe.mts > bench/results/red-team-5/sdk.json
import OpenAI from "openai";
const c = new OpenAI({ baseURL: "http://127.0.0.1:8959/v1", apiKey: "k1", maxRetries: 0 });
const m = "llama";
const out: Record<string, unknown> = {};
async function t(name: string, f: () => Promise<unknown>) {
  try { out[name] = await f(); } catch (e) { out[name] = `ERR ${(e as Error).constructor.name}: ${(e as Error).message}`; }
}
await t("stream include_usage", async () => {
  const s = await c.chat.completions.create({ model: m, stream: true, stream_options: { include_usage: true }, max_tokens: 3, messages: [{ role: "user", content: "hi" }] });
  let text = ""; let usage; let chunks = 0;
  for await (const ch of s) { chunks++; text += ch.choices[0]?.delta?.content ?? ""; if (ch.usage) usage = ch.usage; }
  return { chunks, text, usage };
});
await t("stream no usage, n=2", async () => {
  const s = await c.chat.completions.create({ model: m, stream: true, n: 2, max_tokens: 2, messages: [{ role: "user", content: "hi" }] });
  let usageChunks = 0; let emptyChoices = 0; const idx = new Set<number>();
  for await (const ch of s) { if (ch.usage) usageChunks++; if (ch.choices.length === 0) emptyChoices++; for (const x of ch.choices) idx.add(x.index); }
  return { usageChunks, emptyChoices, indexes: [...idx] };
});
await t("tools", async () => (await c.chat.completions.create({ model: m, max_tokens: 2, tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }], tool_choice: { type: "function", function: { name: "f" } }, messages: [{ role: "user", content: "hi" }] })).choices[0]?.finish_reason);
await t("logprobs stream", async () => { const s = await c.chat.completions.create({ model: m, stream: true, logprobs: true, top_logprobs: 2, max_tokens: 2, messages: [{ role: "user", content: "hi" }] }); let n = 0; for await (const _ of s) n++; return n; });
await t("completions stream", async () => { const s = await c.completions.create({ model: m, prompt: "hi", stream: true, max_tokens: 2 }); let text = ""; let u = 0; for await (const ch of s) { text += ch.choices[0]?.text ?? ""; if (ch.usage) u++; } return { text, u }; });
await t("models.list", async () => (await c.models.list()).data.map((x) => x.id));
await t("models.retrieve missing", async () => c.models.retrieve("nope"));
await t("embeddings", async () => c.embeddings.create({ model: m, input: "hi" }));
await t("wrong model", async () => c.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }));
await t("bad key", async () => new OpenAI({ baseURL: "http://127.0.0.1:8959/v1", apiKey: "nope", maxRetries: 0 }).models.list());
console.log(JSON.stringify(out, null, 1));
