import { createServer } from "node:net";

/**
 * A TCP port that was free a moment ago on `host`. wrangler dev cannot listen
 * on port 0 and report back, so we ask the OS for an ephemeral port, release
 * it and hand it over; the race with another process is tiny on a dev box.
 */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port assigned"))));
    });
  });
}
