// The Worker's side of the fuzz's giant prompt: read + validate the body, then key it, as the Worker does
// (readInferenceBody, prefixKeysForRequest with the default 8,192-token cap), in Node's V8 (workerd embeds it).
// Prints CPU ms and the tokenizer's work per body.  npx tsx bench/results/fuzz-iso/worker-giant.ts
import { clearPrefixMemo, prefixKeysForRequest } from "../../../src/prefix/request-keys";
import { o200kTokenizer } from "../../../src/prefix/tokenizer";
import { readInferenceBody } from "../../../src/worker/request/request-body";

const opts = { model: "llama-3.1-8b-instruct", blockTokens: 16, prefixTokens: 8192 };
const tok = o200kTokenizer();
for (const [name, content] of [
  ["3.5 M spaces", " ".repeat(3_500_000)],
  ["4 M 'a'", "a".repeat(4_000_000)],
  ["4 M '长'", "长".repeat(4_000_000)],
] as const) {
  const body = JSON.stringify({ model: opts.model, max_tokens: 4, messages: [{ role: "user", content }] });
  for (let run = 0; run < 2; run++) {
    clearPrefixMemo();
    const w0 = { ...tok.work };
    const c0 = process.cpuUsage();
    const req = new Request("http://gw/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body });
    const parsed = await readInferenceBody(req, "chat");
    const c1 = process.cpuUsage(c0);
    const keys = prefixKeysForRequest("chat", parsed.body as never, opts);
    const c2 = process.cpuUsage(c0);
    const ms = (c: NodeJS.CpuUsage) => Math.round((c.user + c.system) / 1000);
    console.log(JSON.stringify({
      name, run, bodyBytes: Buffer.byteLength(body), readCpuMs: ms(c1), keyCpuMs: ms(c2) - ms(c1),
      tokenizerChars: tok.work.chars - w0.chars, mergedBytes: tok.work.mergedBytes - w0.mergedBytes,
      keyedTokens: keys.keyed.tokens, keyedChars: keys.keyed.chars, promptTokens: keys.promptTokens,
    }));
  }
}
