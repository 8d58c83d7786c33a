/**
 * A 200 MiB request body sent chunked, without content-length, with 20
 * ordinary streams running: the gateway must refuse it (413) without
 * holding it all, and workerd's memory must not follow the body's size.
 * workerd's RSS is polled every 50 ms while it is sent.
 */
import { request } from "node:http";
import { round } from "../measure";
import { GATEWAY_KEY, MODEL } from "../rig";
import type { Scenario } from "../scenario";

const MIB = 1024 * 1024;
const TOTAL = 200 * MIB;
const TIMEOUT_MS = 180_000;

interface Upload {
  readonly status: number;
  readonly sentBytes: number;
  readonly ms: number;
  readonly error?: string;
}

/** Streams a JSON body of ~`total` bytes in 1 MiB chunks until the gateway answers, fails, or it is all sent. */
export function sendChunked(url: string, total: number, timeoutMs: number): Promise<Upload> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = request(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${GATEWAY_KEY}`,
        "content-type": "application/json",
        "transfer-encoding": "chunked",
      },
    });
    let sent = 0;
    let status = 0;
    let done = false;
    const finish = (error?: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve({
        status,
        sentBytes: sent,
        ms: performance.now() - t0,
        ...(error !== undefined ? { error } : {}),
      });
    };
    const timer = setTimeout(() => finish("timeout"), timeoutMs);
    req.on("response", (res) => {
      status = res.statusCode ?? 0;
      res.resume();
      res.once("end", () => finish());
      res.once("error", (e) => finish(e.message));
    });
    req.on("error", (e) => finish(e.message));
    const chunk = Buffer.alloc(MIB, "a");
    const pump = (): void => {
      while (!done && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!done) req.end('"}]}');
    };
    req.write(`{"model":"${MODEL}","messages":[{"role":"user","content":"`);
    pump();
  });
}

export const hugeBody: Scenario = {
  id: "huge-body",
  fault: "200 MiB chunked body without content-length",
  asFiled: "413 only after buffering (workerd 96 MiB → 1.6 GiB)",
  async run(ctx) {
    const { rig } = ctx;
    const rssBefore = rig.rssBytes() ?? Number.NaN;
    let rssMax = rssBefore;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        rssMax = Math.max(rssMax, rig.rssBytes() ?? 0);
        await ctx.sleep(50);
      }
    })();
    ctx.mark("fault");
    const up = await sendChunked(rig.url, TOTAL, TIMEOUT_MS);
    await ctx.sleep(1000);
    polling = false;
    await poll;
    ctx.mark("clear");
    return {
      now:
        `${up.status === 0 ? `no status (${up.error})` : up.status} after ${round(up.sentBytes / MIB)} MiB sent ` +
        `(${round(up.ms / 1000, 1)} s); workerd RSS ${round(rssBefore / MIB)} → peak ${round(rssMax / MIB)} MiB`,
      figures: {
        status: up.status,
        sentMiBBeforeAnswer: round(up.sentBytes / MIB, 1),
        secondsToAnswer: round(up.ms / 1000, 2),
        uploadError: up.error ?? null,
        workerdRssBeforeMiB: round(rssBefore / MIB, 1),
        workerdRssPeakMiB: round(rssMax / MIB, 1),
      },
    };
  },
};
