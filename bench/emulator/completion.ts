/**
 * One OpenAI completion request against the emulated engine: prompts →
 * engine requests (one per prompt × choice), then either one JSON body when
 * every choice is done, or an SSE stream shaped as vLLM/OpenAI send it:
 * role chunk (chat), one chunk per token, a finish chunk per choice, an
 * optional usage chunk with empty choices, and `data: [DONE]`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { servedModelLen } from "../../sim/model/engine-config";
import type { EngineDriver } from "./engine-driver";
import { badRequest } from "./http-error";
import type { CommonParams, PromptInput } from "./openai-request";
import { chatPromptTokens, encodeText, type PromptTokens, promptBlocks } from "./prompt-tokens";
import { type GeneratedText, generateText } from "./text-gen";

export interface CompletionContext {
  readonly driver: EngineDriver;
  readonly blockTokens: number;
  /** Counts finished choices by finished_reason (for /metrics). */
  readonly countFinished: (reason: string) => void;
  readonly nextId: () => string;
}

/**
 * The request's own clock, for measuring what lies outside the backend: when
 * it arrived (headers parsed) and a sink for when its first non-empty content
 * chunk was written (the moment a client's TTFT stops).
 */
export interface ServerTiming {
  readonly receivedAt: number;
  readonly firstContent: (msSinceReceived: number) => void;
}

interface Choice {
  readonly index: number;
  readonly engineId: string;
  readonly gen: GeneratedText;
  readonly promptIdx: number;
  sent: number;
  started: boolean;
  done: boolean;
  cachedTokens: number;
}

interface Prompt {
  readonly tokens: readonly number[];
  readonly blocks: number[];
}

/**
 * The prompts' tokens, each checked against the engine's context `max` as vLLM checks them, in its
 * words (vllm/entrypoints/renderer.py `_create_tokens_prompt`, then the serving layer's max_tokens
 * check). Text is encoded only to max + 1 tokens: a prompt the engine refuses is refused after
 * a context's worth of work, whatever its length, and its count is then a lower bound ("at least").
 */
function tokensOf(input: PromptInput, max: number, maxTokens: number, chat: boolean): Prompt[] {
  const counted: PromptTokens[] =
    input.kind === "chat"
      ? [chatPromptTokens(input.messages, max)]
      : input.prompts.map((p) =>
          typeof p === "string" ? encodeText(p, max) : { tokens: p, complete: true },
        );
  const param = chat ? "messages" : "prompt";
  for (const { tokens, complete } of counted) {
    const n = tokens.length;
    if (n === 0) throw badRequest("The prompt is empty.", param);
    if (!complete || n > max)
      throw badRequest(
        `This model's maximum context length is ${max} tokens. However, your request has ${complete ? "" : "at least "}${n} input tokens. Please reduce the length of the input messages.`,
        param,
      );
    if (n + maxTokens > max)
      throw badRequest(
        `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${max} tokens and your request has ${n} input tokens (${maxTokens} > ${max} - ${n}).`,
        "max_tokens",
      );
  }
  return counted.map(({ tokens }) => ({ tokens, blocks: [] }));
}

function hashTokens(tokens: readonly number[]): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < tokens.length; i++) {
    h ^= tokens[i]!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function usage(prompts: readonly Prompt[], choices: readonly Choice[], n: number): Record<string, unknown> {
  const promptTokens = prompts.reduce((a, p) => a + p.tokens.length, 0);
  const completionTokens = choices.reduce((a, c) => a + c.gen.pieces.length, 0);
  // Each prompt is prefilled once per choice; report the first choice's cache hit per prompt.
  const cached = prompts.reduce((a, _p, i) => a + (choices[i * n]?.cachedTokens ?? 0), 0);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cached },
  };
}

export function runCompletion(
  ctx: CompletionContext,
  chat: boolean,
  params: CommonParams,
  input: PromptInput,
  req: IncomingMessage,
  res: ServerResponse,
  timing?: ServerTiming,
): void {
  const { driver, blockTokens } = ctx;
  let contentWritten = false;
  // vLLM's context: max_model_len (/v1/models), which the KV cache holds.
  const prompts = tokensOf(input, servedModelLen(driver.engine.config), params.maxTokens, chat);
  for (const p of prompts)
    p.blocks.push(...promptBlocks(p.tokens, params.model, blockTokens, params.cacheSalt));

  const id = `${chat ? "chatcmpl" : "cmpl"}-${ctx.nextId()}`;
  const created = Math.floor(Date.now() / 1000);
  const object = chat ? "chat.completion.chunk" : "text_completion";
  const choices: Choice[] = [];
  prompts.forEach((p, pi) => {
    const ph = hashTokens(p.tokens);
    for (let c = 0; c < params.n; c++) {
      const index = pi * params.n + c;
      choices.push({
        index,
        engineId: `${id}/${index}`,
        gen: generateText(ph, params.seed, c, params.maxTokens, params.stop, params.endReason),
        promptIdx: pi,
        sent: 0,
        started: false,
        done: false,
        cachedTokens: 0,
      });
    }
  });

  let remaining = choices.length;
  let finished = false;
  const write = (payload: unknown): void => {
    res.write(`data: ${JSON.stringify(payload)}\n\n`);
  };
  const chunk = (c: Choice, body: Record<string, unknown>, finish: string | null): void => {
    const choice = chat
      ? { index: c.index, delta: body, logprobs: null, finish_reason: finish }
      : { index: c.index, text: body.content ?? "", logprobs: null, finish_reason: finish };
    write({ id, object, created, model: params.model, choices: [choice] });
  };

  if (params.stream) {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    res.flushHeaders();
  }

  const finishAll = (): void => {
    finished = true;
    if (params.stream) {
      if (params.includeUsage)
        write({
          id,
          object,
          created,
          model: params.model,
          choices: [],
          usage: usage(prompts, choices, params.n),
        });
      res.end("data: [DONE]\n\n");
      return;
    }
    const body = {
      id,
      object: chat ? "chat.completion" : "text_completion",
      created,
      model: params.model,
      choices: choices.map((c) =>
        chat
          ? {
              index: c.index,
              message: { role: "assistant", content: c.gen.text },
              logprobs: null,
              finish_reason: c.gen.finishReason,
            }
          : { index: c.index, text: c.gen.text, logprobs: null, finish_reason: c.gen.finishReason },
      ),
      usage: usage(prompts, choices, params.n),
    };
    const json = JSON.stringify(body);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
    res.end(json);
  };

  res.on("close", () => {
    if (finished) return;
    // The client went away: free the engine's work for every choice still running.
    for (const c of choices) {
      if (c.done) continue;
      c.done = true;
      driver.abort(c.engineId);
      ctx.countFinished("abort");
    }
  });

  for (const c of choices) {
    const p = prompts[c.promptIdx]!;
    driver.submit(
      { id: c.engineId, blocks: p.blocks, promptTokens: p.tokens.length, outputTokens: c.gen.pieces.length },
      {
        onFirstToken(cachedTokens) {
          c.cachedTokens = cachedTokens;
          c.started = true;
          if (params.stream && chat) chunk(c, { role: "assistant", content: "" }, null);
        },
        onProgress(tokens) {
          if (!params.stream) return;
          for (; c.sent < tokens; c.sent++) {
            const piece = c.gen.pieces[c.sent]!;
            if (piece === "") continue;
            chunk(c, { content: piece }, null);
            if (!contentWritten) {
              contentWritten = true;
              timing?.firstContent(performance.now() - timing.receivedAt);
            }
          }
        },
        onDone(cachedTokens) {
          c.cachedTokens = cachedTokens;
          c.done = true;
          ctx.countFinished(c.gen.finishReason);
          if (params.stream) chunk(c, {}, c.gen.finishReason);
          if (--remaining === 0) finishAll();
        },
      },
    );
  }
  // Keep the request body stream drained: nothing more is read from it.
  req.resume();
}
