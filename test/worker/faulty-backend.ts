/**
 * Node side of the workerd tests: a backend that breaks. It answers a chat
 * completion with SSE headers and one content event, then resets the
 * connection mid-stream, as a crashing engine does. Real HTTP on loopback,
 * started by global-setup.ts next to the emulators.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface FaultyBackend {
  readonly url: string;
  close(): Promise<void>;
}

const EVENT = `data: ${JSON.stringify({
  id: "chatcmpl-faulty",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta: { content: "partial" } }],
})}\n\n`;

export async function startFaultyBackend(): Promise<FaultyBackend> {
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/health") {
      res.writeHead(200).end();
      return;
    }
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(EVENT);
      setTimeout(() => res.socket?.destroy(), 50);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
