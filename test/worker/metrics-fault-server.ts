/**
 * Node side of the workerd scrape tests: a fake backend whose /metrics
 * misbehaves the ways a real one can, each under its own path prefix (a
 * backend url of `${base}/slow` is scraped at `${base}/slow/metrics`):
 * - /slow:  headers only after 30 s (a wedged exporter);
 * - /lag/v1/models: a model list holding `test-model`, after LAG_MS (a slow backend check, test/worker/backend-check.test.ts);
 * - /stall: headers and the first lines, then nothing for 30 s;
 * - /huge:  an endless exposition whose gauges never come (a scrape must stop at its byte cap);
 * - /html:  200 with a login page (a proxy in the way).
 * It also answers inference calls the ways a broken backend or a proxy in front of one can
 * (the edge-pass tests, test/worker/backend-answers.test.ts):
 * - /html/v1/chat/completions:     200 text/html, a login page;
 * - /badsse/v1/chat/completions:   200 text/event-stream, one good event, then lines that are not JSON;
 * - /cutjson/v1/chat/completions:  200 application/json with a content-length, closed half way;
 * - /jsonreset/v1/chat/completions: 200 application/json, the whole answer, then the connection reset (chunked,
 *                                  never ended): the read after a complete JSON value fails;
 * - /cutjsonend/v1/chat/completions: the same half body, then a clean end (chunked; or a content-length that
 *                                  is short: fetch stops reading there);
 * - /empty/v1/chat/completions:    200 application/json with no body at all (content-length: 0);
 * - /emptysse/v1/chat/completions: 200 text/event-stream that ends before its first event;
 * - /sseerr/v1/chat/completions:   200 text/event-stream, one token, then an error event and [DONE] (vLLM's way
 *                                  of failing a request mid-stream);
 * - /err200/v1/chat/completions:   200 application/json whose body is an OpenAI error object;
 * - /nocontent/v1/chat/completions: 204, no body at all;
 * - /busy/v1/chat/completions:     an engine under a spike: headers at once; a prompt with "queued" in it gets its
 *                                  first event 2.5 s later, any other streams a token every 200 ms for 4 s.
 * - /e400/v1/chat/completions:     400 with vLLM's OpenAI error body for a prompt past the context length;
 * - /stall503/v1/chat/completions: 503 headers and the start of a body, then nothing (held);
 * - /busy503/v1/chat/completions:  the same with a retry-after that is an HTTP date 1 to 2 s ahead (a proxy
 *                                  shedding load whose error body stalls).
 * - /echo/v1/chat/completions:     200 text/event-stream whose one content event holds the request body exactly as
 *                                  it arrived, then a usage-only event and [DONE] (what did the backend receive?).
 * - /bigerr/v1/chat/completions:   500 with an OpenAI error body of 100 KiB (past what a retry keeps of one).
 * - /echo-id/v1/chat/completions:  200 text/event-stream whose one content event is the x-request-id it was sent.
 * - /echo-auth/v1/chat/completions: the same with the authorization header it was sent (which account's key?).
 * - /ssejson/v1/chat/completions:  an event stream (a token, a usage-only chunk, [DONE]) sent as application/json
 *                                  (a proxy that rewrote the content-type, an engine that never set it).
 * - /donestall/v1/chat/completions: 200 text/event-stream: a token, a usage-only chunk and [DONE], then the body is held
 *                                  open (a proxy that keeps it open after the end of the answer).
 * - /donereset/v1/chat/completions: the same, then the connection is reset 50 ms after [DONE] (a proxy that drops
 *                                  it, a content-length past the bytes sent): the read after the answer fails.
 * - /redirect/v1/chat/completions:  307 to /echo/v1/chat/completions (a backend url that is not the server's own address).
 * - /longevent/v1/chat/completions: 200 text/event-stream: a token, one event of 1.5 MiB (past what the tap holds),
 *                                  a token, a usage-only chunk, [DONE]; written in 64 KiB pieces.
 * - /poison/v1/chat/completions:  500 for a body holding "POISON" (a prompt every backend fails), and for one holding
 *                                  "VICTIM" the first time that body comes (a backend failing a request that its retry
 *                                  elsewhere gets served); otherwise 200 application/json.
 * - /usagelie/v1/chat/completions:  200, streamed or not as asked, whose `usage` is the JSON on the first line of the
 *                                  first message (the test's: negative, fractional, past any context, cached_tokens
 *                                  past prompt_tokens).
 * - /deflate/v1/chat/completions:   200 application/json in `content-encoding: deflate`, which fetch does not decode;
 * - /negotiate/v1/chat/completions: the same only when the request's Accept-Encoding allows deflate (none does).
 * - /ra-absurd/v1/chat/completions: 429 with `retry-after: 99999999` (a proxy in front of a backend).
 * - /cutevent/v1/chat/completions: 200 text/event-stream: a token, then half an event (its JSON cut), and a clean end.
 * - /lastnl/v1/chat/completions:   200 text/event-stream: a token, then `data: [DONE]` with one line break, and a clean
 *                                  end (a server that leaves out the last blank line).
 * - /trickle/v1/chat/completions:  200 text/event-stream: a token, then the next event one byte every 200 ms, without
 *                                  end (never idle for long, never an event).
 * - /hungping/v1/chat/completions: an engine that is hung behind a front end that still answers: headers at once and
 *                                  a keep-alive comment (`: ping`) every 200 ms on every open stream, as sse-starlette
 *                                  and axum's KeepAlive send; a prompt with "queued" in it never gets an event, one with
 *                                  "stalled" gets a token and then only comments, one with "quiet" gets nothing at all
 *                                  (no keep-alive), one with "reject" is failed at once in the stream (an error event
 *                                  and [DONE] in a 200, vLLM's way); with "asjson" too, the stream is sent as
 *                                  application/json.
 * - /waf403/v1/chat/completions:   a firewall in front of an engine: 403 text/html for a body holding "DROP TABLE",
 *                                  otherwise a one-token answer, streamed or not as asked;
 * - /deny403/v1/chat/completions:  the same 403 page for every request (a proxy refusing the gateway's key).
 * - /refuse200/v1/chat/completions: a body holding "TOO_LONG" gets 200 application/json with an OpenAI error object
 *                                  (context length), streamed or not (a hosted API refusing a request on its content
 *                                  without the status); any other gets an event stream with one token and [DONE].
 * - /flood/v1/chat/completions:    200 text/event-stream: a token's event every 20 ms, without end (an engine that
 *                                  always has the next token for a client that may not be reading).
 * Everything it holds is let go at close(), so the test run ends promptly.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { deflateSync } from "node:zlib";

/** 1 KiB of a histogram line, again and again. */
const FILLER = `vllm:request_prompt_tokens_bucket{model_name="m",engine="0",le="${"9".repeat(960)}"} 1.0\n`;
/** How much of /huge it writes at most: far past any scrape's byte cap, bounded so nothing runs away. */
const HUGE_MAX_BYTES = 64 * 1024 * 1024;
const HOLD_MS = 30_000;
/** /lag/v1/models answers after this. */
export const LAG_MS = 600;
/** /longevent's long event: past the stream tap's 1 MiB bound (stream-tap.ts MAX_PENDING_CHARS). */
const LONG_EVENT_CHARS = 1536 * 1024;
const LONG_EVENT_PIECE = 64 * 1024;
/** /trickle's pace: one byte per this many ms. */
const TRICKLE_MS = 200;
/** /flood: one token's event per this many ms. */
const FLOOD_MS = 20;
/** /hungping: the keep-alive comment's period. */
const PING_MS = 200;
/** /busy: how long a queued request waits for its first event, and how the running ones stream. */
const BUSY_QUEUE_MS = 2500;
const BUSY_TOKEN_MS = 200;
const BUSY_TOKENS = 20;
/** How long /cutjson waits after its half body before it drops the connection. */
const CUT_MS = 50;

/** Resolves when `res` can take more, or is gone; leaves no listener behind. */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** One server-sent event carrying `o` as JSON. */
const event = (o: unknown): string => `data: ${JSON.stringify(o)}\n\n`;
/** One streamed token's event. */
const tokenEvent = (content: string): string =>
  event({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] });

export interface MetricsFaultServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startMetricsFaultServer(): Promise<MetricsFaultServer> {
  const timers = new Set<NodeJS.Timeout>();
  const hold = (res: ServerResponse, then: () => void, ms: number = HOLD_MS) => {
    const t = setTimeout(() => {
      timers.delete(t);
      then();
    }, ms);
    timers.add(t);
    res.on("close", () => {
      clearTimeout(t);
      timers.delete(t);
    });
  };
  /** Runs `tick` every `ms` until `res` closes (a stream the server keeps writing to). */
  const every = (res: ServerResponse, tick: () => void, ms: number) => {
    const t = setInterval(tick, ms);
    timers.add(t);
    res.on("close", () => {
      clearInterval(t);
      timers.delete(t);
    });
  };
  /** /poison's VICTIM bodies already failed once. */
  const victims = new Set<string>();
  const server = createServer(async (req, res) => {
    res.on("error", () => {});
    // `${base}/_2/busy` is `${base}/busy` under another address: one fake server stands for several backends of
    // a pool (helpers.ts faultServerPool), which config refuses to take under one url twice.
    if (req.url !== undefined) req.url = req.url.replace(/^\/_\d+(?=\/)/, "");
    const ok = () => res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
    switch (req.url) {
      case "/lag/v1/models":
        hold(
          res,
          () => {
            res.writeHead(200, { "content-type": "application/json" });
            res.end(JSON.stringify({ object: "list", data: [{ id: "test-model", object: "model" }] }));
          },
          LAG_MS,
        );
        return;
      case "/slow/metrics":
        hold(res, () => {
          ok();
          res.end("vllm:num_requests_running 0\n");
        });
        return;
      case "/stall/metrics":
        ok();
        res.write("# HELP vllm:num_requests_running Number of requests in model execution batches.\n");
        hold(res, () => res.end());
        return;
      case "/huge/metrics": {
        ok();
        let sent = 0;
        while (sent < HUGE_MAX_BYTES && !res.destroyed) {
          if (!res.write(FILLER)) await drainedOrClosed(res);
          sent += FILLER.length;
        }
        res.end();
        return;
      }
      case "/html/metrics":
        ok();
        res.end("<html>please log in</html>");
        return;
      case "/html/v1/chat/completions":
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end("<html>please log in</html>");
        return;
      case "/badsse/v1/chat/completions":
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "Hi" } }] })}\n\n`,
        );
        res.end("data: {this is not json\n\ndata: <html>oops</html>\n\ndata: [DONE]\n\n");
        return;
      case "/cutjson/v1/chat/completions":
        res.writeHead(200, { "content-type": "application/json", "content-length": "400" });
        res.write(
          '{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hel',
        );
        hold(res, () => res.destroy(), CUT_MS);
        return;
      case "/jsonreset/v1/chat/completions":
        res.writeHead(200, { "content-type": "application/json" });
        res.write(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }],
            usage: {
              prompt_tokens: 3,
              completion_tokens: 1,
              total_tokens: 4,
              prompt_tokens_details: { cached_tokens: 0 },
            },
          }),
        );
        hold(res, () => res.socket?.destroy(), CUT_MS);
        return;
      case "/cutjsonend/v1/chat/completions":
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          '{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hel',
        );
        return;
      case "/empty/v1/chat/completions":
        res.writeHead(200, { "content-type": "application/json", "content-length": "0" });
        res.end();
        return;
      case "/emptysse/v1/chat/completions":
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end();
        return;
      case "/sseerr/v1/chat/completions":
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "Hi" } }] })}\n\n`,
        );
        res.end(
          `data: ${JSON.stringify({ error: { object: "error", message: "EngineCore encountered an issue", type: "InternalServerError", code: 500 } })}\n\ndata: [DONE]\n\n`,
        );
        return;
      case "/err200/v1/chat/completions":
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ error: { message: "engine failed", type: "InternalServerError", code: 500 } }),
        );
        return;
      case "/stall503/v1/chat/completions":
        res.writeHead(503, { "content-type": "application/json" });
        res.write('{"error": {"message": "over');
        hold(res, () => res.end());
        return;
      case "/busy503/v1/chat/completions": {
        // An HTTP date has whole seconds: the next one but one is 1 to 2 s away.
        const at = new Date((Math.floor(Date.now() / 1000) + 2) * 1000);
        res.writeHead(503, { "content-type": "application/json", "retry-after": at.toUTCString() });
        res.write('{"error": {"message": "over');
        hold(res, () => res.end());
        return;
      }
      case "/donestall/v1/chat/completions":
      case "/donereset/v1/chat/completions":
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "Hi" } }] })}\n\n`,
        );
        res.write(
          `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 0 } } })}\n\ndata: [DONE]\n\n`,
        );
        if (req.url?.startsWith("/donereset")) hold(res, () => res.socket?.destroy(), 50);
        else hold(res, () => res.end());
        return;
      case "/jsononly/v1/chat/completions":
        // A whole JSON completion whatever was asked (a server or proxy that ignores "stream": true).
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }),
        );
        return;
      case "/jsonlabelledsse/v1/chat/completions":
        // A whole JSON completion under an event-stream label, whatever was asked.
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }],
          }),
        );
        return;
      case "/sseonly/v1/chat/completions":
        // An event stream whatever was asked (a server or proxy that ignores "stream": false).
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`${tokenEvent("Hello")}data: [DONE]\n\n`);
        return;
      case "/afterdone/v1/chat/completions": {
        // The whole answer and [DONE], then more events every 200 ms, never idle, until the client leaves (or
        // HOLD_MS): a proxy or server that does not stop at [DONE].
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `${tokenEvent("Hi")}${event({ id: "x", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } })}data: [DONE]\n\n`,
        );
        every(res, () => res.write(tokenEvent("after")), 200);
        hold(res, () => res.end());
        return;
      }
      case "/redirect/v1/chat/completions":
        // Somewhere else (here /echo; on a real fleet an http→https hop, a moved host, a login wall).
        res.writeHead(307, { location: "/echo/v1/chat/completions", "content-length": "0" });
        res.end();
        return;
      case "/echo/v1/chat/completions": {
        const parts: Buffer[] = [];
        for await (const part of req) parts.push(part as Buffer);
        const received = Buffer.concat(parts).toString("utf8");
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(
          event({
            id: "x",
            object: "chat.completion.chunk",
            choices: [{ index: 0, delta: { content: received } }],
          }) +
            event({
              id: "x",
              object: "chat.completion.chunk",
              choices: [],
              usage: { prompt_tokens: 3, completion_tokens: 1 },
            }) +
            "data: [DONE]\n\n",
        );
        return;
      }
      case "/bigerr/v1/chat/completions":
        req.resume();
        res.writeHead(500, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            error: { message: "x".repeat(100 * 1024), type: "InternalServerError", code: 500 },
          }),
        );
        return;
      case "/echo-id/v1/chat/completions":
      case "/echo-auth/v1/chat/completions": {
        req.resume();
        const id =
          (req.url.startsWith("/echo-auth") ? req.headers.authorization : req.headers["x-request-id"]) ?? "";
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(
          `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: id } }] })}\n\ndata: [DONE]\n\n`,
        );
        return;
      }
      case "/ssejson/v1/chat/completions":
      case "/longevent/v1/chat/completions": {
        req.resume();
        const usage = event({
          id: "x",
          object: "chat.completion.chunk",
          choices: [],
          usage: { prompt_tokens: 3, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 2 } },
        });
        const long = req.url.startsWith("/longevent");
        const text =
          tokenEvent("Hi") +
          (long ? tokenEvent("L".repeat(LONG_EVENT_CHARS)) : "") +
          tokenEvent(" there") +
          usage +
          "data: [DONE]\n\n";
        res.writeHead(200, { "content-type": long ? "text/event-stream" : "application/json" });
        for (let at = 0; at < text.length && !res.destroyed; at += LONG_EVENT_PIECE) {
          if (!res.write(text.slice(at, at + LONG_EVENT_PIECE))) await drainedOrClosed(res);
        }
        res.end();
        return;
      }
      case "/waf403/v1/chat/completions":
      case "/deny403/v1/chat/completions": {
        // /waf403: a web application firewall in front of a healthy engine, refusing a body that holds "DROP TABLE"
        // with its own 403 page; any other request is answered (streamed or not, as asked). /deny403: a proxy
        // refusing the gateway's key, 403 for everything.
        let body = "";
        for await (const chunk of req) body += chunk;
        if (req.url?.startsWith("/deny403") || body.includes("DROP TABLE")) {
          res.writeHead(403, { "content-type": "text/html" });
          res.end("<html><body><h1>403 Forbidden</h1>Request blocked by security policy.</body></html>");
          return;
        }
        if ((JSON.parse(body) as { stream?: boolean }).stream === true) {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.end(`${tokenEvent("Hello")}data: [DONE]\n\n`);
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }),
        );
        return;
      }
      case "/refuse200/v1/chat/completions": {
        // A hosted API (or a proxy) that refuses a request on its content with a 200 and a JSON error body, even
        // when the request asked for a stream; any other request gets an event stream.
        let body = "";
        for await (const chunk of req) body += chunk;
        if (body.includes("TOO_LONG")) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              error: {
                message: "This model's maximum context length is 8192 tokens.",
                type: "invalid_request_error",
                param: "messages",
                code: "context_length_exceeded",
              },
            }),
          );
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`${tokenEvent("Hello")}data: [DONE]\n\n`);
        return;
      }
      case "/poison/v1/chat/completions": {
        let body = "";
        for await (const chunk of req) body += chunk;
        const victim = body.includes("VICTIM") && !victims.has(body);
        if (victim) victims.add(body);
        const fails = body.includes("POISON") || victim;
        res.writeHead(fails ? 500 : 200, { "content-type": "application/json" });
        res.end(
          fails
            ? JSON.stringify({ error: { message: "boom", type: "InternalServerError", code: 500 } })
            : JSON.stringify({
                id: "x",
                object: "chat.completion",
                choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
                usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
              }),
        );
        return;
      }
      case "/usagelie/v1/chat/completions": {
        let body = "";
        for await (const chunk of req) body += chunk;
        const asked = JSON.parse(body) as { stream?: boolean; messages: { content: string }[] };
        const usage = JSON.parse(asked.messages[0]!.content.split("\n")[0]!) as unknown;
        const stream = asked.stream === true;
        const message = { role: "assistant", content: "ok" };
        if (!stream) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              id: "x",
              object: "chat.completion",
              choices: [{ index: 0, message, finish_reason: "stop" }],
              usage,
            }),
          );
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(
          event({
            id: "x",
            object: "chat.completion.chunk",
            choices: [{ index: 0, delta: { content: "ok" } }],
          }) +
            event({ id: "x", object: "chat.completion.chunk", choices: [], usage }) +
            "data: [DONE]\n\n",
        );
        return;
      }
      case "/cutevent/v1/chat/completions":
      case "/lastnl/v1/chat/completions": {
        req.resume();
        const token = `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "Hi" } }] })}\n\n`;
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(
          token +
            (req.url.startsWith("/cutevent")
              ? 'data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" th'
              : "data: [DONE]\n"),
        );
        return;
      }
      case "/trickle/v1/chat/completions": {
        req.resume();
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(tokenEvent("Hi"));
        const next = tokenEvent(" there");
        let at = 0;
        every(res, () => res.write(next[at++ % next.length]!), TRICKLE_MS);
        return;
      }
      case "/flood/v1/chat/completions": {
        req.resume();
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.flushHeaders();
        every(res, () => res.write(tokenEvent("x")), FLOOD_MS);
        return;
      }
      case "/hungping/v1/chat/completions": {
        const parts: Buffer[] = [];
        for await (const part of req) parts.push(part as Buffer);
        const prompt = Buffer.concat(parts).toString("utf8");
        // "asjson": the same stream under application/json (a proxy that rewrote the content-type).
        res.writeHead(200, {
          "content-type": prompt.includes("asjson") ? "application/json" : "text/event-stream",
        });
        if (prompt.includes("reject")) {
          const error = {
            message: "rejected by the front end",
            type: "BadRequestError",
            param: null,
            code: 400,
          };
          res.end(`${event({ error })}data: [DONE]\n\n`);
          return;
        }
        res.flushHeaders();
        // No keep-alive at all: the front end only holds the request.
        if (prompt.includes("quiet")) {
          hold(res, () => res.end(), HOLD_MS);
          return;
        }
        if (prompt.includes("stalled")) res.write(tokenEvent("Hi"));
        every(
          res,
          () => {
            if (!res.destroyed) res.write(": ping\n\n");
          },
          PING_MS,
        );
        return;
      }
      case "/busy/v1/chat/completions": {
        // An engine under a spike: every request's headers at once (vLLM sends them on accepting it); a prompt
        // holding "queued" gets its first event only after BUSY_QUEUE_MS (its turn in the queue), any other
        // prompt streams a token every BUSY_TOKEN_MS for BUSY_TOKENS tokens (requests already running).
        const parts: Buffer[] = [];
        for await (const part of req) parts.push(part as Buffer);
        const queued = Buffer.concat(parts).toString("utf8").includes("queued");
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.flushHeaders();
        if (queued) {
          hold(res, () => res.end(`${tokenEvent("late")}data: [DONE]\n\n`), BUSY_QUEUE_MS);
          return;
        }
        let sent = 0;
        res.write(tokenEvent("t"));
        every(
          res,
          () => {
            if (res.destroyed) return;
            if (++sent === BUSY_TOKENS) res.end("data: [DONE]\n\n");
            else res.write(tokenEvent("t"));
          },
          BUSY_TOKEN_MS,
        );
        return;
      }
      case "/busy429/v1/chat/completions":
        // A backend at its rate limit: 429, come back in 30 s (vLLM behind a rate-limiting proxy, a hosted API).
        req.resume();
        res.writeHead(429, { "content-type": "application/json", "retry-after": "30" });
        res.end(JSON.stringify({ error: { message: "busy here", type: "rate_limit_error", code: 429 } }));
        return;
      case "/ra-absurd/v1/chat/completions":
        req.resume();
        res.writeHead(429, { "content-type": "application/json", "retry-after": "99999999" });
        res.end(JSON.stringify({ error: { message: "slow down", type: "rate_limit_error", code: 429 } }));
        return;
      case "/deflate/v1/chat/completions":
      case "/negotiate/v1/chat/completions": {
        req.resume();
        const answer = JSON.stringify({
          id: "x",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        });
        // /negotiate deflates only when the request allows it (no Accept-Encoding: any coding; RFC 9110).
        const accept = req.headers["accept-encoding"];
        const deflate = req.url?.startsWith("/deflate") || accept === undefined || accept.includes("deflate");
        res.writeHead(200, {
          "content-type": "application/json",
          ...(deflate ? { "content-encoding": "deflate" } : {}),
        });
        res.end(deflate ? deflateSync(answer) : answer);
        return;
      }
      case "/nocontent/v1/chat/completions":
        res.writeHead(204);
        res.end();
        return;
      case "/e400/v1/chat/completions":
        res.writeHead(400, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            object: "error",
            message: "This model's maximum context length is 131072 tokens.",
            type: "BadRequestError",
            param: null,
            code: 400,
          }),
        );
        return;
      default:
        res.writeHead(404).end("not found");
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
