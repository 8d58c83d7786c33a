/**
 * The emulator's fault injector: holds the current fault and /health
 * override, decides which inference request a fault takes (its scope, then
 * a seeded draw), does the fault to the answer (fault-responses.ts), and
 * counts everything the emulator did (EmulatorStats).
 *
 * Every faulted response is tracked until its "close" event (the client
 * leaving, a cut, stop() destroying the socket); its chunk timer is cleared
 * and its reference dropped there, so nothing outlives its connection.
 * Clearing or replacing the fault lets hung requests through (served
 * normally) and closes stalled streams: a fault set by one test leaves
 * nothing behind for the next.
 */
import type { ServerResponse } from "node:http";
import { hashString, Rng } from "../../sim/workloads/prng";
import {
  cutConnection,
  type FaultedRequest,
  faultPieces,
  openFaultedBody,
  readFaultedRequest,
  resetConnection,
  sendFaultStatus,
} from "./fault-responses";
import type { EmulatorStats, FaultKind, FaultSpec, HealthOverride } from "./fault-spec";
import { send } from "./http-io";

/** What a /health probe looks like to a fault that it follows. */
const PROBE: FaultedRequest = { chat: false, stream: false, model: "", text: "" };

const DEFAULT_SEED = 1;

interface Taken {
  readonly kind: FaultKind;
  /** A /health probe, not an inference request (not counted as abandoned or dropped). */
  readonly probe: boolean;
  /** A hung request's way out when its fault is lifted. */
  readonly release: (() => void) | undefined;
  /** Closed by the fault itself (reset, cut, a stall cleared): not the client's doing. */
  closedByUs: boolean;
}

function drawn(rng: Rng, f: FaultSpec): boolean {
  return f.probability === undefined || f.probability >= 1 || rng.next() < f.probability;
}

export class FaultInjector {
  private spec: FaultSpec | null = null;
  private override: HealthOverride | null = null;
  private rng = new Rng(DEFAULT_SEED);
  /** Probes draw from their own stream, so probing does not shift the requests' draws. */
  private probeRng = new Rng(hashString("health", DEFAULT_SEED));
  private readonly open = new Map<ServerResponse, Taken>();
  /** The emulated process each response arrived in; stop() starts a new one. */
  private readonly arrivedIn = new WeakMap<ServerResponse, number>();
  private generation = 0;
  private readonly n = {
    requests: 0,
    served: 0,
    rejected: 0,
    cancelled: 0,
    dropped: 0,
    abandoned: 0,
    released: 0,
    healthOk: 0,
    healthFailed: 0,
    restarts: 0,
    metricsScrapes: 0,
  };
  private readonly faulted: Record<FaultKind, number> = { status: 0, hang: 0, stall: 0, cut: 0, reset: 0 };

  get fault(): FaultSpec | null {
    return this.spec;
  }

  get health(): HealthOverride | null {
    return this.override;
  }

  /** Sets a validated fault, or clears it (null); restarts the PRNG and lets go of what the last one held. */
  setFault(spec: FaultSpec | null): void {
    this.spec = spec;
    const seed = spec?.seed ?? DEFAULT_SEED;
    this.rng = new Rng(seed);
    this.probeRng = new Rng(hashString("health", seed));
    for (const [res, t] of this.open) {
      if (t.release !== undefined) {
        this.open.delete(res);
        if (!t.probe) this.n.released++;
        t.release();
      } else if (t.kind === "stall" || t.kind === "cut") {
        t.closedByUs = true;
        res.destroy();
      }
    }
  }

  setHealth(override: HealthOverride | null): void {
    this.override = override;
  }

  /** The emulated process was killed: what is still open belongs to the dead one. */
  stopped(): void {
    this.generation++;
  }

  restarted(): void {
    this.n.restarts++;
  }

  /** Counts an inference request and, when it closes, how it ended (unless a fault took it). */
  request(res: ServerResponse): void {
    this.n.requests++;
    this.arrivedIn.set(res, this.generation);
    res.once("close", () => {
      if (this.open.has(res)) return;
      if (res.writableFinished) {
        if (res.statusCode === 200) this.n.served++;
        else this.n.rejected++;
      } else if (!this.alive(res)) this.n.dropped++;
      else this.n.cancelled++;
    });
  }

  /**
   * Offers an inference request (its raw body) to the fault: true when the
   * fault took it (answered it, or is holding it), false when it is to be
   * served normally. `serve` serves it later, if a hung request is released.
   */
  take(raw: string, chat: boolean, res: ServerResponse, serve: () => void): boolean {
    const f = this.spec;
    if (f === null) return false;
    const r = readFaultedRequest(raw, chat);
    if (f.match !== undefined && !r.text.includes(f.match)) return false;
    if (!drawn(this.rng, f)) return false;
    this.faulted[f.kind]++;
    this.inflict(f, r, res, serve, false);
    return true;
  }

  /** Answers GET /health: the override, else the fault if /health follows it, else 200. */
  probe(res: ServerResponse): void {
    this.arrivedIn.set(res, this.generation);
    const ok = (): void => send(res, 200, "", "text/plain");
    if (this.override !== null) {
      this.n.healthFailed++;
      sendFaultStatus(res, { kind: "status", status: this.override.status ?? 503, message: "Unhealthy." });
      return;
    }
    const f = this.spec;
    if (f !== null && f.health === "follow" && drawn(this.probeRng, f)) {
      this.n.healthFailed++;
      this.inflict(f, PROBE, res, ok, true);
      return;
    }
    this.n.healthOk++;
    ok();
  }

  /** GET /metrics was served (never faulted: a scraper is not what the faults test). */
  scraped(): void {
    this.n.metricsScrapes++;
  }

  stats(): EmulatorStats {
    const { healthOk, healthFailed, ...n } = this.n;
    return {
      ...n,
      faulted: { ...this.faulted },
      held: this.open.size,
      health: { ok: healthOk, failed: healthFailed },
    };
  }

  private alive(res: ServerResponse): boolean {
    return this.arrivedIn.get(res) === this.generation;
  }

  private inflict(
    f: FaultSpec,
    r: FaultedRequest,
    res: ServerResponse,
    serve: () => void,
    probe: boolean,
  ): void {
    const t: Taken = {
      kind: f.kind,
      probe,
      release: f.kind === "hang" ? serve : undefined,
      closedByUs: false,
    };
    this.open.set(res, t);
    res.once("close", () => {
      if (this.open.get(res) !== t) return; // released: counted as a normal request
      this.open.delete(res);
      if (probe || t.closedByUs || f.kind === "status") return;
      if (this.alive(res)) this.n.abandoned++;
      else this.n.dropped++;
    });
    switch (f.kind) {
      case "status":
        sendFaultStatus(res, f);
        return;
      case "hang":
        return;
      case "reset":
        t.closedByUs = true;
        resetConnection(res);
        return;
      case "stall":
      case "cut": {
        const write = openFaultedBody(res, r);
        const pieces = faultPieces(r, f.afterChunks ?? (f.kind === "cut" ? 1 : 0));
        this.pace(res, pieces, f.chunkIntervalMs ?? 0, write, () => {
          if (f.kind !== "cut") return;
          t.closedByUs = true;
          cutConnection(res);
        });
        return;
      }
    }
  }

  /** Writes the pieces `intervalMs` apart (at once for 0), then calls `then`; stops if the response closes. */
  private pace(
    res: ServerResponse,
    pieces: readonly string[],
    intervalMs: number,
    write: (piece: string) => void,
    then: () => void,
  ): void {
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    const step = (): void => {
      timer = undefined;
      while (i < pieces.length) {
        write(pieces[i++]!);
        if (intervalMs > 0 && i < pieces.length) {
          timer = setTimeout(step, intervalMs);
          return;
        }
      }
      then();
    };
    res.once("close", () => clearTimeout(timer));
    step();
  }
}
