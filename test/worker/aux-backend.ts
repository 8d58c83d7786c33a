/**
 * TEMPORARY auxiliary backend used until bench/emulator/server.ts lands: a
 * tiny OpenAI-compatible server (chat + completions, SSE with real delays,
 * usage with cached_tokens from an exact prefix memory). Replaced by the emulator.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface AuxBackend {
  url: string;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let s = "";
    req.on("data", (c) => {
      s += c;
    });
    req.on("end", () => resolve(s));
  });
}

export async function startAuxBackend(opts: { model: string; apiKey: string }): Promise<AuxBackend> {
  const seen: string[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === "/health") return void res.writeHead(200).end("ok");
    if (req.headers.authorization !== `Bearer ${opts.apiKey}`) return void res.writeHead(401).end("{}");
    const text = await readBody(req);
    const body = JSON.parse(text) as {
      messages?: { content: string }[];
      prompt?: string;
      stream?: boolean;
      max_tokens?: number;
      stream_options?: { include_usage?: boolean };
    };
    const prompt = body.prompt ?? (body.messages ?? []).map((m) => m.content).join("\n");
    let cached = 0;
    for (const p of seen) {
      let i = 0;
      while (i < p.length && i < prompt.length && p[i] === prompt[i]) i++;
      cached = Math.max(cached, i);
    }
    seen.push(prompt);
    const promptTokens = prompt.split(/\s+/).length;
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
      total_tokens: promptTokens + 5,
      prompt_tokens_details: { cached_tokens: Math.floor(cached / 4) },
    };
    const chat = req.url === "/v1/chat/completions";
    const n = body.max_tokens ?? 5;
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          model: opts.model,
          choices: [
            { index: 0, message: { role: "assistant", content: "hello ".repeat(n) }, finish_reason: "stop" },
          ],
          usage,
        }),
      );
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    if (chat) send({ id: "x", choices: [{ index: 0, delta: { role: "assistant", content: "" } }] });
    for (let i = 0; i < n; i++) {
      await new Promise((r) => setTimeout(r, 20));
      if (res.destroyed) return;
      send(
        chat
          ? { id: "x", choices: [{ index: 0, delta: { content: `t${i} ` } }] }
          : { id: "x", choices: [{ index: 0, text: `t${i} ` }] },
      );
    }
    if (body.stream_options?.include_usage) send({ id: "x", choices: [], usage });
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}
