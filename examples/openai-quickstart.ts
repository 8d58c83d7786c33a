/**
 * The official `openai` client against the gateway: what a new user runs
 * after `npm run dev` (four emulated vLLM replicas behind wrangler dev).
 *
 *   npx tsx examples/openai-quickstart.ts
 *
 * GATEWAY_URL and GATEWAY_KEY override the local defaults (.dev.vars.example).
 * The same system prompt is sent twice: the second request should land on the
 * same backend (route "affinity") and report cached prompt tokens.
 */
import OpenAI from "openai";

const baseURL = `${process.env.GATEWAY_URL ?? "http://127.0.0.1:8787"}/v1`;
const apiKey = process.env.GATEWAY_KEY ?? "pgw-local-dev-key";
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });

const models = await client.models.list();
const model = models.data[0]?.id;
if (model === undefined) throw new Error("the gateway lists no model: check BACKENDS");
console.log(`models: ${models.data.map((m) => m.id).join(", ")}`);

const system = `You are a support assistant for ExampleCorp. ${"Answer briefly and cite the policy section. ".repeat(80)}`;

// Non-streaming chat, twice with the same system prompt: watch the route and cached tokens.
for (const question of ["How do I reset my password?", "Can I change my billing date?"]) {
  const { data, response } = await client.chat.completions
    .create({
      model,
      max_tokens: 24,
      messages: [
        { role: "system", content: system },
        { role: "user", content: question },
      ],
    })
    .withResponse();
  console.log(
    `chat: backend=${response.headers.get("x-prefix-gateway-backend")} route=${response.headers.get("x-prefix-gateway-route")}`,
    `prompt=${data.usage?.prompt_tokens} cached=${data.usage?.prompt_tokens_details?.cached_tokens}`,
    `→ ${JSON.stringify(data.choices[0]?.message.content?.slice(0, 60))}`,
  );
}

// Streaming chat with usage in the last chunk.
const stream = await client.chat.completions.create({
  model,
  max_tokens: 16,
  stream: true,
  stream_options: { include_usage: true },
  messages: [
    { role: "system", content: system },
    { role: "user", content: "Stream me a short answer." },
  ],
});
let text = "";
let chunks = 0;
for await (const chunk of stream) {
  chunks++;
  text += chunk.choices[0]?.delta?.content ?? "";
  if (chunk.usage) console.log(`stream: ${chunks} chunks, usage ${JSON.stringify(chunk.usage)}`);
}
console.log(`stream text: ${JSON.stringify(text.slice(0, 60))}`);

// Legacy completions, streaming and not.
const completion = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 8 });
console.log(
  `completion: ${JSON.stringify(completion.choices[0]?.text)} usage=${JSON.stringify(completion.usage)}`,
);
const cstream = await client.completions.create({
  model,
  prompt: "Once upon a time",
  max_tokens: 8,
  stream: true,
});
let ctext = "";
for await (const chunk of cstream) ctext += chunk.choices[0]?.text ?? "";
console.log(`completion stream: ${JSON.stringify(ctext)}`);
