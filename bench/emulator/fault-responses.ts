/**
 * How a faulted request is answered on the wire: what a fault needs to know
 * of the request (read leniently: a fault takes malformed requests too), the
 * OpenAI-style error of a status fault, the opening of a body that will
 * stall or be cut (same headers and SSE chunk shapes as a served request,
 * content from text-gen), and the two ways a connection dies.
 */
import { type ServerResponse, STATUS_CODES } from "node:http";
import type { StatusFault } from "./fault-spec";
import { HttpError } from "./http-error";
import { send } from "./http-io";
import { generateText, hashString } from "./text-gen";

/** What a fault reads of an inference request. */
export interface FaultedRequest {
  readonly chat: boolean;
  readonly stream: boolean;
  readonly model: string;
  /** The prompt's text: chat message contents (text parts), or completion prompt strings, joined by newlines. */
  readonly text: string;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function messageText(m: unknown): string {
  if (!isObject(m)) return "";
  const c = m.content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  return c.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("");
}

/** Never throws: a body that is not JSON has no prompt text and is not streamed. */
export function readFaultedRequest(raw: string, chat: boolean): FaultedRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    body = undefined;
  }
  if (!isObject(body)) return { chat, stream: false, model: "", text: "" };
  let text = "";
  if (chat && Array.isArray(body.messages)) text = body.messages.map(messageText).join("\n");
  else if (!chat) {
    const p = body.prompt;
    if (typeof p === "string") text = p;
    else if (Array.isArray(p)) text = p.filter((x) => typeof x === "string").join("\n");
  }
  return {
    chat,
    stream: body.stream === true,
    model: typeof body.model === "string" ? body.model : "",
    text,
  };
}

/** The default retry-after of a status fault: 1 s for a 429, none otherwise. */
export function retryAfterOf(f: StatusFault): number | undefined {
  return f.retryAfterSeconds ?? ((f.status ?? 503) === 429 ? 1 : undefined);
}

/** An OpenAI-style error for an injected status: `{"error":{"message","type","param","code"}}`. */
export function sendFaultStatus(res: ServerResponse, f: StatusFault): void {
  const status = f.status ?? 503;
  const name = STATUS_CODES[status] ?? `Status ${status}`;
  const e =
    status === 429
      ? new HttpError(
          429,
          f.message ?? "Too many requests: the server is at capacity.",
          "requests",
          null,
          "rate_limit_exceeded",
        )
      : new HttpError(
          status,
          f.message ?? `${name} (emulated fault).`,
          status >= 500 ? "server_error" : "invalid_request_error",
          null,
          name.toLowerCase().replace(/[^a-z0-9]+/g, "_"),
        );
  const retryAfter = retryAfterOf(f);
  send(
    res,
    status,
    e.body(),
    "application/json",
    retryAfter === undefined ? {} : { "retry-after": String(retryAfter) },
  );
}

let seq = 0;

/**
 * Sends the headers of a 200 answer (and, for a chat stream, its role chunk)
 * and returns a writer of content pieces: SSE chunks for a stream. A JSON
 * answer gets the opening of its body on the first piece and nothing after.
 */
export function openFaultedBody(res: ServerResponse, r: FaultedRequest): (piece: string) => void {
  const id = `${r.chat ? "chatcmpl" : "cmpl"}-fault${(seq++).toString(36)}`;
  const created = Math.floor(Date.now() / 1000);
  if (!r.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    let opened = false;
    return () => {
      if (opened) return;
      opened = true;
      const object = r.chat ? "chat.completion" : "text_completion";
      res.write(
        `{"id":"${id}","object":"${object}","created":${created},"model":${JSON.stringify(r.model)},"choices":[`,
      );
    };
  }
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
  const object = r.chat ? "chat.completion.chunk" : "text_completion";
  const chunk = (delta: Json): void => {
    const choice = r.chat
      ? { index: 0, delta, logprobs: null, finish_reason: null }
      : { index: 0, text: delta.content ?? "", logprobs: null, finish_reason: null };
    res.write(`data: ${JSON.stringify({ id, object, created, model: r.model, choices: [choice] })}\n\n`);
  };
  if (r.chat) chunk({ role: "assistant", content: "" });
  return (piece) => chunk({ content: piece });
}

/** The first `n` content pieces the emulator would generate for this prompt. */
export function faultPieces(r: FaultedRequest, n: number): readonly string[] {
  return n === 0 ? [] : generateText(hashString(r.text), 0, 0, n, []).pieces;
}

/** Ends the connection mid-answer once what was written is on the wire: the client sees a truncated body. */
export function cutConnection(res: ServerResponse): void {
  const socket = res.socket;
  if (socket === null) return;
  socket.once("finish", () => socket.destroy());
  socket.end();
}

/** Resets the connection (TCP RST) without a byte of answer. */
export function resetConnection(res: ServerResponse): void {
  res.socket?.resetAndDestroy();
}
