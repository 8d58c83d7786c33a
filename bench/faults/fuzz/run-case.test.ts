import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BOUND_MS, type FetchCase } from "./case-types";
import { runCase } from "./run-case";
import { reconcileUploads } from "./upload";

const secrets = { needles: ["backend-secret"] };
let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A loopback server (port from the OS) that answers each request as `onRequest` says. */
async function serve(onRequest: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(onRequest);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const upload = (bytes: number): FetchCase => ({
  kind: "fetch",
  label: "body past the cap",
  method: "POST",
  path: "/v1/chat/completions",
  headers: { authorization: "Bearer k", "content-type": "application/json" },
  body: new Uint8Array(bytes).fill(0x61),
  boundMs: BOUND_MS,
});

const REFUSAL = JSON.stringify({
  error: { message: "Request body too large.", type: "invalid_request_error", code: "request_too_large" },
});

describe("fuzz runCase: large uploads", () => {
  it("judges the 413 a server sent before closing on an upload it refused, though our write failed", async () => {
    // As the gateway does past 16 MiB: answer after the first bytes, then close with the rest unread.
    const base = await serve((req, res) => {
      req.once("data", () => {
        res.writeHead(413, { "content-type": "application/json", "x-request-id": "r1", connection: "close" });
        res.end(REFUSAL, () => req.socket.destroy());
      });
    });
    const o = await runCase(base, upload(17 * 1024 * 1024), secrets);
    expect(o.problems).toEqual([]);
    expect(o.status).toBe(413);
    expect(o.code).toBe("request_too_large");
    expect(o.origin).toBe("worker");
  });

  it("marks a large upload closed with no answer by its own x-request-id, and only the gateway's log clears it", async () => {
    let sentId: string | undefined;
    const base = await serve((req) => {
      sentId = req.headers["x-request-id"] as string;
      req.once("data", () => req.socket.destroy());
    });
    const c = upload(4 * 1024 * 1024);
    const o = await runCase(base, { ...c, headers: { ...c.headers, "x-request-id": "<odd id>" } }, secrets);
    expect(o.status).toBe("closed");
    expect(o.unansweredId).toMatch(/^fuzz-upload-\d+-\d+$/);
    expect(sentId).toBe(o.unansweredId);
    expect(o.problems).toHaveLength(1);
    expect(o.problems[0]).toMatch(/^connection closed with no answer/);

    const line = (status: number, id = o.unansweredId): string =>
      JSON.stringify({ requestId: id, method: "POST", path: "/v1/chat/completions", status });
    // The gateway logged its refusal: the reset destroyed the answer, not the gateway.
    const [refused] = reconcileUploads([o], ["workerd: started", line(413)]);
    expect(refused).toMatchObject({ status: 413, origin: "worker", problems: [] });
    // No line for this id (a gateway that died), or a 5xx: still a problem, saying what the log held.
    expect(reconcileUploads([o], [line(413, "someone-else")])[0]!.problems).toEqual([
      "connection closed with no answer, no line in the gateway's log",
    ]);
    expect(reconcileUploads([o], [line(502)])[0]!.problems).toEqual([
      "connection closed with no answer, the gateway logged 502",
    ]);
  });

  it("judges a large upload's ordinary answer like any other (a leaked secret is still a problem)", async () => {
    const base = await serve((req, res) => {
      let n = 0;
      req.on("data", (b: Buffer) => {
        n += b.length;
      });
      req.on("end", () => {
        res.writeHead(400, { "content-type": "application/json", "x-request-id": "r2" });
        res.end(JSON.stringify({ error: { message: `read ${n} bytes via backend-secret`, type: "bad" } }));
      });
    });
    const o = await runCase(base, upload(2 * 1024 * 1024), secrets);
    expect(o.status).toBe(400);
    expect(o.problems).toEqual(['leaks "backend-secret"']);
  });
});
