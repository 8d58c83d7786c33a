/**
 * The emulator's HTTP control endpoint, for whoever can only reach it over
 * HTTP (workerd tests). Served only when the emulator is started with
 * `control: true` (CLI `--control`); otherwise these paths are unknown paths.
 * Control requests never meet a fault. Every answer is the ControlState
 * (fault, /health override, up, stats); bad input is a 400 naming the field.
 *
 *   GET    /_control/fault     the state
 *   POST   /_control/fault     set the fault: a FaultSpec (fault-spec.ts)
 *   DELETE /_control/fault     clear it (hung requests are released, stalled streams closed)
 *   POST   /_control/health    /health fails on its own: {"status"?: 400..599, default 503}
 *   DELETE /_control/health    /health is itself again
 *   POST   /_control/down      {"ms": 1..60000}: 202, then the process is killed (stop) and
 *                              restarted on the same port after ms (start)
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type ControlState,
  type FaultSpec,
  type HealthOverride,
  type Parsed,
  parseDownRequest,
  parseFaultSpec,
  parseHealthOverride,
} from "./fault-spec";
import { badRequest, HttpError } from "./http-error";
import { readBody, send } from "./http-io";

export const CONTROL_PREFIX = "/_control/";

/** What the control endpoint drives: the emulator's in-process handle, in part. */
export interface ControlTarget {
  state(): ControlState;
  setFault(spec: FaultSpec | null): void;
  setHealth(override: HealthOverride | null): void;
  /** Kills the emulated process now and restarts it after `ms`. */
  downFor(ms: number): void;
}

async function jsonBody<T>(
  req: IncomingMessage,
  parse: (v: unknown) => Parsed<T>,
  empty?: unknown,
): Promise<T> {
  const raw = await readBody(req);
  let body: unknown = empty;
  if (raw.trim() !== "" || empty === undefined) {
    try {
      body = JSON.parse(raw);
    } catch {
      throw badRequest("The body must be JSON.");
    }
  }
  const parsed = parse(body);
  if (!parsed.ok) throw badRequest(parsed.message);
  return parsed.value;
}

export async function handleControl(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  path: string,
  target: ControlTarget,
): Promise<void> {
  const reply = (status = 200): void => send(res, status, JSON.stringify(target.state()));
  const route = `${method} ${path}`;
  switch (route) {
    case "GET /_control/fault":
      return reply();
    case "POST /_control/fault":
      target.setFault(await jsonBody(req, parseFaultSpec));
      return reply();
    case "DELETE /_control/fault":
      target.setFault(null);
      return reply();
    case "POST /_control/health":
      target.setHealth(await jsonBody(req, parseHealthOverride, {}));
      return reply();
    case "DELETE /_control/health":
      target.setHealth(null);
      return reply();
    case "POST /_control/down": {
      const { ms } = await jsonBody(req, parseDownRequest);
      // Killed once the answer is on its way, as a process that acknowledged and then died.
      res.once("finish", () => target.downFor(ms));
      return reply(202);
    }
  }
  throw new HttpError(404, `No route for ${route}.`, "invalid_request_error", null, "not_found");
}
