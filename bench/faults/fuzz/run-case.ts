/** One fuzz case sent the way its kind says (fetch, raw socket, burst), large uploads over a raw socket (upload.ts). */
import type { FuzzCase } from "./case-types";
import type { Secrets } from "./judge";
import { sendRaw } from "./raw";
import { type CaseOutcome, sendBurst, sendFetch } from "./send";
import { isLargeUpload, uploadAsRaw } from "./upload";

let uploads = 0;

export function runCase(base: string, c: FuzzCase, secrets: Secrets): Promise<CaseOutcome> {
  const port = Number(new URL(base).port);
  if (c.kind === "fetch") {
    if (!isLargeUpload(c)) return sendFetch(base, c, secrets);
    // An id the gateway keeps (SAFE_REQUEST_ID) and logs, unique in this process.
    return sendRaw(port, uploadAsRaw(c, port, `fuzz-upload-${process.pid}-${++uploads}`), secrets);
  }
  if (c.kind === "burst") return sendBurst(base, c, secrets);
  return sendRaw(port, c, secrets);
}
