import OpenAI from "openai";
const c = new OpenAI({ apiKey: "rt11-client-key-one", baseURL: "http://127.0.0.1:28300/v1", maxRetries: 0, timeout: 30000 });
const [model, streamArg] = process.argv.slice(2);
const stream = streamArg === "true";
const t0 = Date.now();
try {
  if (stream) {
    const s = await c.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "", n = 0;
    for await (const ch of s) { n++; text += ch.choices?.[0]?.delta?.content ?? ""; }
    console.log(JSON.stringify({ model, stream, chunks: n, text: text.slice(0, 80), ms: Date.now() - t0 }));
  } else {
    const r = await c.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] });
    console.log(JSON.stringify({ model, stream, type: typeof r, content: r?.choices?.[0]?.message?.content, raw: typeof r === "string" ? r.slice(0, 80) : undefined, ms: Date.now() - t0 }));
  }
} catch (e) { console.log(JSON.stringify({ model, stream, error: e.constructor.name, status: e.status, message: String(e.message).slice(0, 200), ms: Date.now() - t0 })); }
