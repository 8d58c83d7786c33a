/**
 * The simulator's cells mode: one pool served by K RouterDO cells, as the
 * gateway runs it (DESIGN.md, "Scale and geography"). Each cell is a
 * routing-core Router over the backends src/routing/cells.ts assigns it;
 * the cell of each request is chosen by src/routing/cell-chooser.ts, the
 * code the Worker runs, from the cell loads the Worker would know: each
 * cell's requests in flight as route responses reported them, each
 * response relaying every cell's freshest figure that any isolate's call
 * brought it (cell-loads.ts; in the simulator calls are instant, so a
 * figure is as fresh as the decision that took it), and the keys of the
 * last conversations placed in the cell (cell-families.ts). Nothing here decides:
 * it wires the shipped pieces together.
 */
import { CellChooser } from "../src/routing/cell-chooser";
import { RecentFamilies, relayCellFamilies } from "../src/routing/cell-families";
import { CellLoads, relayCellLoads } from "../src/routing/cell-loads";
import { CellRing } from "../src/routing/cell-ring";
import { assignCells, cellMembers } from "../src/routing/cells";
import { SETTINGS } from "../src/routing/defaults";
import { Router, type RouteTicket, seededRandom } from "../src/routing/index";
import type {
  BackendSpec,
  EngineSignals,
  PolicyName,
  RouteContext,
  RouteRequest,
} from "../src/routing/types";
import type { RouterFactory, SimRouter } from "./simulator";

/** What the cells did over a run, beside the simulator's per-backend figures. */
export interface CellTally {
  /** Requests by the cell choice's reason (cell-chooser.ts). */
  home: number;
  spill: number;
  /** Requests decided below their first family (their family was split). */
  split: number;
  /** Cell of each backend, in fleet order. */
  cellOf: Int32Array;
}

interface CellTicket {
  readonly cell: number;
  readonly ticket: RouteTicket;
}

export interface CellsOptions {
  readonly policy: PolicyName;
  readonly blockTokens: number;
  readonly cells: number;
  /**
   * Worker isolates the requests pass through, each with its own cell
   * chooser and its own view of the cells' loads (the route responses it got
   * itself); each request goes through one drawn at random (seeded), as a
   * conversation's turns may in production. Default 1.
   */
  readonly isolates?: number;
  readonly seed?: number;
  readonly balanceFactor?: number;
}

/** A pool of K cells, as a simulator router; `tally` collects what the cell choice did. */
export function cellsRouterFactory(options: CellsOptions, tally: CellTally): RouterFactory {
  const { policy, blockTokens, cells: k } = options;
  const balanceFactor = options.balanceFactor ?? SETTINGS.BALANCE_FACTOR.default;
  const isolates = options.isolates ?? 1;
  return (backends, readings) => {
    const cellOf = assignCells(backends, k);
    tally.cellOf = cellOf;
    const members = cellMembers(
      backends.map((b, i) => ({ ...b, global: i })),
      cellOf,
      k,
    );
    const routers = members.map(
      (m) =>
        new Router(
          m.map(({ global: _, ...spec }): BackendSpec => spec),
          {
            policy,
            blockTokens,
            balanceFactor,
            // The gateway's cells see engines only as its scrape took them (none when it is off), as readingsOf gives our policies.
            ...(readings.scraped !== undefined
              ? {
                  engineSignals: (i: number): EngineSignals | undefined => readings.scraped!(m[i]!.global),
                  ...(readings.scrapedMaxAgeMs !== undefined
                    ? { engineSignalMaxAgeMs: readings.scrapedMaxAgeMs }
                    : {}),
                }
              : {}),
          },
        ),
    );
    const ring = new CellRing(members.map((m) => m.reduce((s, b) => s + b.weight, 0)));
    const choosers = Array.from(
      { length: isolates },
      () => new CellChooser(ring, { balanceFactor, blockTokens }),
    );
    // What each cell knows of every cell's load: its own exactly, the others as callers relayed them (cell-loads.ts).
    const views = routers.map(() => new CellLoads(k));
    // What each cell relays of the families newly placed in it (cell-families.ts).
    const placed = routers.map(() => new RecentFamilies());
    const draw = seededRandom(options.seed ?? 1);
    const router: SimRouter = {
      route(req: RouteRequest, ctx: RouteContext) {
        const chooser = choosers[Math.floor(draw() * isolates)]!;
        const choice = chooser.choose(req, ctx.now);
        tally[choice.reason]++;
        if (choice.level > 0) tally.split++;
        const cell = routers[choice.cell]!;
        const { decision, ticket } = cell.route(req, ctx);
        // The route call carries the isolate's figures of every cell; the response, the cell's (cell-loads.ts).
        const sent = chooser.loads.toWire(ctx.now);
        chooser.loads.merge(
          relayCellLoads(views[choice.cell]!, choice.cell, cell.totalInflight, sent, ctx.now),
          ctx.now,
        );
        chooser.learnFamilies(relayCellFamilies(placed[choice.cell]!, choice.placed));
        const t: CellTicket = { cell: choice.cell, ticket };
        return { decision, ticket: t };
      },
      complete(ticket, outcome, ctx) {
        const t = ticket as CellTicket;
        routers[t.cell]!.complete(t.ticket, outcome, ctx);
      },
    };
    return router;
  };
}

export function emptyTally(): CellTally {
  return { home: 0, spill: 0, split: 0, cellOf: new Int32Array(0) };
}

/** Each cell's time-averaged requests in flight (sum over its backends), and the busiest over the weighted mean. */
export function cellLoads(
  inflightAvg: readonly number[],
  backends: readonly BackendSpec[],
  cellOf: Int32Array,
  k: number,
): { perCell: number[]; maxOverMean: number } {
  const perCell = new Array<number>(k).fill(0);
  const weight = new Array<number>(k).fill(0);
  inflightAvg.forEach((x, i) => {
    perCell[cellOf[i]!]! += x;
    weight[cellOf[i]!]! += backends[i]!.weight;
  });
  const total = perCell.reduce((s, x) => s + x, 0);
  const wsum = weight.reduce((s, w) => s + w, 0);
  let maxOverMean = 0;
  for (let j = 0; j < k; j++) {
    const fair = (weight[j]! / wsum) * total;
    if (fair > 0) maxOverMean = Math.max(maxOverMean, perCell[j]! / fair);
  }
  return { perCell, maxOverMean };
}
