import { describe, expect, it } from "vitest";
import { CellChooser, cellKeyDepth } from "./cell-chooser";
import { RecentFamilies, relayCellFamilies } from "./cell-families";
import { CellLoads, relayCellLoads } from "./cell-loads";
import { CellRing } from "./cell-ring";
import { CELL_KEEP_FACTOR, CELL_MIN_EVIDENCE } from "./defaults";
import { seededRandom } from "./seeded-random";
import type { RouteRequest } from "./types";

const BLOCK = 16;

/** Chained keys: a shared head of `shared` blocks (named by `head`), then `own` blocks unique to `tail`. */
function request(head: number, shared: number, tail: number, own: number): RouteRequest {
  const blocks: number[] = [];
  for (let i = 0; i < shared; i++) blocks.push(head * 1_000_003 + i);
  for (let i = 0; i < own; i++) blocks.push(head * 1_000_003 + tail * 7_919 + 500_000 + i);
  return { blocks, promptTokens: blocks.length * BLOCK };
}

function chooser(k: number, keepFactor?: number): CellChooser {
  return new CellChooser(new CellRing(Array.from({ length: k }, () => 1)), {
    balanceFactor: 1.25,
    blockTokens: BLOCK,
    ...(keepFactor !== undefined ? { keepFactor } : {}),
  });
}

/** Turn `turn` of conversation `conv` under the one system prompt of 32 blocks: its history grows by 4 blocks a turn. */
function turn(conv: number, t: number): RouteRequest {
  return request(1, 32, conv, 4 * (t + 1));
}

/** A chooser that has split the system prompt into conversations (every request shares it). */
function splitChooser(k: number, keepFactor?: number): CellChooser {
  const c = chooser(k, keepFactor);
  for (let i = 0; i < CELL_MIN_EVIDENCE * 4; i++) c.choose(turn(10_000 + i, 0), i);
  return c;
}

describe("cellKeyDepth", () => {
  it("is the block spanning the first 64 tokens", () => {
    expect(cellKeyDepth(16)).toBe(3);
    expect(cellKeyDepth(512)).toBe(0);
  });
});

describe("CellChooser", () => {
  it("one cell: cell 0 whatever it is told", () => {
    const c = chooser(1);
    c.report(0, 10_000, 0);
    expect(c.choose(request(1, 8, 1, 4), 0)).toEqual({ cell: 0, reason: "home", level: 0 });
  });

  it("a family goes to the ring home of its key at 64 tokens, and requests sharing those 64 tokens go together", () => {
    const c = chooser(4);
    const first = c.choose(request(5, 4, 1, 10), 0);
    expect(first.reason).toBe("home");
    expect(first.cell).toBe(c.ring.home(request(5, 4, 1, 10).blocks[3]!));
    // Among other families (it is 1/20 of the traffic: no cell's share), every request of it goes there.
    for (let t = 2; t < 400; t++) {
      if (t % 20 === 0) expect(c.choose(request(5, 4, t, 10), t).cell).toBe(first.cell);
      else c.choose(request(100 + t, 4, t, 10), t);
    }
  });

  it("a family with all of an isolate's traffic is split after a few requests, long before CELL_MIN_EVIDENCE", () => {
    const c = chooser(4);
    const levels: number[] = [];
    for (let t = 0; t < 8; t++) levels.push(c.choose(request(1, 32, t, 8), t).level);
    // Its first request is no evidence of its own share, and the divergence is known from the second on.
    expect(levels[0]).toBe(0);
    expect(levels.slice(3).every((l) => l > 0)).toBe(true);
  });

  it("a family whose home is over its cap goes to its next cell in probe order, and home again once home is under it", () => {
    const c = chooser(4);
    const req = request(9, 4, 1, 4);
    const key = req.blocks[3]!;
    const order = c.ring.order(key);
    for (let j = 0; j < 4; j++) c.report(j, j === order[0] ? 40 : 10, 0);
    expect(c.choose(req, 1)).toEqual({ cell: order[1], reason: "spill", level: 0 });
    // Home is back under its cap: the family goes home (no isolate keeps where it went).
    c.report(order[0]!, 5, 2);
    expect(c.choose(req, 3)).toEqual({ cell: order[0], reason: "home", level: 0 });
  });

  it("isolates with the same figures send a family to the same cell, whatever each saw before", () => {
    const k = 4;
    const a = chooser(k);
    const b = chooser(k);
    const random = seededRandom(7);
    // Isolate a has routed many requests of other families through a home that was over its cap; b none.
    for (let i = 0; i < 500; i++) {
      for (let j = 0; j < k; j++) a.report(j, j === i % k ? 60 : 10, i);
      a.choose(request(Math.floor(random() * 50), 4, i, 4), i);
    }
    // Both now hold the same figures (a route response relays them alike).
    const figures = [12, 30, 9, 14];
    for (let j = 0; j < k; j++) {
      a.report(j, figures[j]!, 1_000);
      b.report(j, figures[j]!, 1_000);
    }
    for (let head = 0; head < 50; head++) {
      const req = request(head, 4, 9_999, 4);
      expect(b.choose(req, 1_001).cell).toBe(a.choose(req, 1_001).cell);
    }
  });

  it("a family that takes a cell's share of the traffic is split where its requests diverge", () => {
    const k = 4;
    const c = chooser(k);
    const random = seededRandom(3);
    // Every request shares a 32-block system prompt, then is one of 200 conversations.
    const cells = new Set<number>();
    let splitSeen = 0;
    for (let i = 0; i < CELL_MIN_EVIDENCE * 4; i++) {
      const conv = Math.floor(random() * 200);
      const choice = c.choose(request(1, 32, conv, 8), i);
      if (choice.level > 0) {
        splitSeen++;
        cells.add(choice.cell);
      }
    }
    expect(splitSeen).toBeGreaterThan(CELL_MIN_EVIDENCE);
    // Split into conversations, the system prompt's traffic reaches every cell.
    expect(cells.size).toBe(k);
    // And a conversation's turns still go together: its key past the shared part names its family.
    const a = c.choose(request(1, 32, 17, 8), 10_000);
    const b = c.choose(request(1, 32, 17, 12), 10_001);
    expect(a.level).toBeGreaterThan(0);
    expect(b.cell).toBe(a.cell);
  });

  it("families under a cell's share are never split", () => {
    const c = chooser(4);
    const random = seededRandom(4);
    for (let i = 0; i < 2000; i++) {
      const head = Math.floor(random() * 500);
      expect(c.choose(request(head, 8, i, 4), i).level).toBe(0);
    }
  });

  it("no cell above c × its share, with eight isolates each seeing 1/8 of the requests and the cells relaying loads", () => {
    const k = 4;
    const isolates = Array.from({ length: 8 }, () => chooser(k));
    const views = Array.from({ length: k }, () => new CellLoads(k));
    const inflight = new Array<number>(k).fill(0);
    const random = seededRandom(11);
    for (let i = 0; i < 4000; i++) {
      // One hot prompt (60%: it cannot be split, its requests never diverge) among 300 small families; nothing completes.
      const req = random() < 0.6 ? request(1, 32, 0, 8) : request(2 + (i % 300), 8, i, 4);
      const isolate = isolates[Math.floor(random() * isolates.length)]!;
      // 20 requests/s: an isolate hears from a cell it does not call itself only through the relay.
      const now = i * 50;
      const { cell } = isolate.choose(req, now);
      inflight[cell]!++;
      const back = relayCellLoads(views[cell]!, cell, inflight[cell]!, isolate.loads.toWire(now), now);
      isolate.loads.merge(back, now);
    }
    const total = inflight.reduce((s, x) => s + x, 0);
    // The cap is ceil(c · share · (T + 1)) when a request is placed; c = 1.25 here.
    for (const x of inflight) expect(x).toBeLessThanOrEqual(Math.ceil(1.25 * ((total + 1) / k)) + 1);
  });

  it("a conversation this isolate placed before stays home up to CELL_KEEP_FACTOR × its share; a new one leaves at c", () => {
    const k = 4;
    const c = splitChooser(k);
    const old = turn(1, 0);
    const home = c.ring.home(old.blocks[32]!);
    // Its first placement by this isolate names it, for the cell to relay (cell-families.ts); later ones do not.
    expect(c.choose(old, 1_000)).toEqual({ cell: home, reason: "home", level: 1, placed: old.blocks[32] });
    // A conversation with the same home that this isolate has not seen.
    let conv = 2;
    while (c.ring.home(turn(conv, 0).blocks[32]!) !== home) conv++;
    // Home at 15 of 45 in flight: at its cap under c = 1.25 (ceil(1.25 · 46/4) = 15), under CELL_KEEP_FACTOR's (1.5: 18).
    for (let j = 0; j < k; j++) c.report(j, j === home ? 15 : 10, 1_001);
    expect(c.choose(turn(1, 1), 1_002)).toEqual({ cell: home, reason: "home", level: 1 });
    const fresh = c.choose(turn(conv, 0), 1_003);
    expect(fresh.reason).toBe("spill");
    expect(fresh.cell).not.toBe(home);
    // Above the looser bound too (40 of 70: cap ceil(1.5 · 71/4) = 27) the continuing one leaves as well.
    for (let j = 0; j < k; j++) c.report(j, j === home ? 40 : 10, 1_004);
    expect(c.choose(turn(1, 2), 1_005).reason).toBe("spill");
    // With the looser bound set to c, the continuing one leaves at c like any other (today's rule before it).
    const strict = splitChooser(k, 1.25);
    strict.choose(old, 1_000);
    for (let j = 0; j < k; j++) strict.report(j, j === home ? 15 : 10, 1_001);
    expect(strict.choose(turn(1, 1), 1_002).reason).toBe("spill");
  });

  it("a conversation another isolate placed, relayed by its cell, is held to CELL_KEEP_FACTOR here too", () => {
    const k = 4;
    const a = splitChooser(k);
    const b = splitChooser(k);
    const conv = turn(1, 0);
    const key = conv.blocks[32]!;
    const home = a.ring.home(key);
    const first = a.choose(conv, 1_000);
    expect(first).toEqual({ cell: home, reason: "home", level: 1, placed: key });
    const cell = new RecentFamilies();
    const wire = relayCellFamilies(cell, first.placed);
    expect(wire).toEqual([key]);
    // Home at its cap under c, under CELL_KEEP_FACTOR's (as above); b has never seen the conversation.
    for (const x of [a, b]) for (let j = 0; j < k; j++) x.report(j, j === home ? 15 : 10, 1_001);
    const unrelayed = splitChooser(k);
    for (let j = 0; j < k; j++) unrelayed.report(j, j === home ? 15 : 10, 1_001);
    expect(unrelayed.choose(turn(1, 1), 1_002).reason).toBe("spill");
    // Once a response from any cell has relayed it, b keeps it home (and names it, new to b, for its cell).
    b.learnFamilies(wire);
    expect(b.choose(turn(1, 1), 1_002)).toEqual({ cell: home, reason: "home", level: 1, placed: key });
    // A whole family is never named: the relay is for split-off ones.
    expect(chooser(k).choose(request(9, 4, 1, 4), 0).placed).toBeUndefined();
  });

  it("whole families are held to c whatever this isolate saw before", () => {
    const c = chooser(4);
    // Among 300 other families: far below a cell's share, so it stays whole.
    for (let t = 0; t < 300; t++) c.choose(request(100 + t, 4, t, 4), t);
    const req = request(9, 4, 1, 4);
    const order = c.ring.order(req.blocks[3]!);
    expect(c.choose(req, 300)).toEqual({ cell: order[0], reason: "home", level: 0 });
    for (let j = 0; j < 4; j++) c.report(j, j === order[0] ? 15 : 10, 301);
    expect(c.choose(request(9, 4, 2, 4), 302)).toEqual({ cell: order[1], reason: "spill", level: 0 });
  });

  it("no cell above CELL_KEEP_FACTOR × its share with conversations, eight isolates and a skewed home", () => {
    const k = 4;
    const isolates = Array.from({ length: 8 }, () => splitChooser(k));
    const ring = isolates[0]!.ring;
    const views = Array.from({ length: k }, () => new CellLoads(k));
    // The cells relay the conversations placed in them, so most turns count as continuing in every isolate.
    const placed = Array.from({ length: k }, () => new RecentFamilies());
    const inflight = new Array<number>(k).fill(0);
    const random = seededRandom(12);
    // 90% of requests are of conversations homed in cell 0: without a bound it would hold 90% of the load.
    const homed0: number[] = [];
    const others: number[] = [];
    for (let conv = 0; conv < 2000; conv++)
      (ring.home(turn(conv, 0).blocks[32]!) === 0 ? homed0 : others).push(conv);
    const turns = new Map<number, number>();
    let spills = 0;
    for (let i = 0; i < 4000; i++) {
      const pool = random() < 0.9 ? homed0 : others;
      const conv = pool[Math.floor(random() * Math.min(pool.length, 40))]!;
      const t = turns.get(conv) ?? 0;
      turns.set(conv, t + 1);
      const isolate = isolates[Math.floor(random() * isolates.length)]!;
      const now = 100_000 + i * 50;
      const choice = isolate.choose(turn(conv, t), now);
      if (choice.reason === "spill") spills++;
      inflight[choice.cell]!++;
      const back = relayCellLoads(
        views[choice.cell]!,
        choice.cell,
        inflight[choice.cell]!,
        isolate.loads.toWire(now),
        now,
      );
      isolate.loads.merge(back, now);
      isolate.learnFamilies(relayCellFamilies(placed[choice.cell]!, choice.placed));
    }
    const total = inflight.reduce((s, x) => s + x, 0);
    expect(spills).toBeGreaterThan(0);
    for (const x of inflight)
      expect(x).toBeLessThanOrEqual(Math.ceil(CELL_KEEP_FACTOR * ((total + 1) / k)) + 1);
  });
});

describe("CellChooser.fallbackOrder (a full cell's request, moved: router-client.ts)", () => {
  it("the other cells in the probe order of the request's first family key, the same in every isolate, changing nothing", () => {
    const a = chooser(4);
    const b = chooser(4);
    const req = request(7, 8, 1, 4);
    const key = req.blocks[cellKeyDepth(BLOCK)]!;
    const order = Array.from(a.ring.order(key));
    const chosen = a.choose(req, 0).cell;
    expect(b.choose(req, 0).cell).toBe(chosen);
    expect(a.fallbackOrder(req, chosen)).toEqual(order.filter((c) => c !== chosen));
    expect(b.fallbackOrder(req, chosen)).toEqual(a.fallbackOrder(req, chosen));
    // Reading it is not a request: the family's counts, and so the next choice, are as without it.
    for (let i = 0; i < 10; i++) a.fallbackOrder(req, chosen);
    expect(a.choose(req, 1)).toEqual(b.choose(req, 1));
  });

  it("a prompt with no full block: its length stands for the key, as on the ring", () => {
    const c = chooser(3);
    const req: RouteRequest = { blocks: [], promptTokens: 9 };
    expect(c.fallbackOrder(req, 1)).toEqual(Array.from(c.ring.order(9)).filter((x) => x !== 1));
  });
});

describe("CellChooser: a cell with no usable backend (markUnusable)", () => {
  /** 200 families at 64 tokens, each its own first key: about half have each cell of two as home. */
  const families = Array.from({ length: 200 }, (_, f) => request(100 + f, 4, 1, 2));

  it("its families go to the other cells while it is marked, and come home when the mark runs out or it answers", () => {
    const c = chooser(2);
    const home = families.map((r) => c.choose(r, 0).cell);
    expect(home.filter((h) => h === 0).length).toBeGreaterThan(50);
    expect(home.filter((h) => h === 1).length).toBeGreaterThan(50);
    // Both cells answered lately, equally loaded (the figures the route responses relay).
    c.report(0, 10, 1000);
    c.report(1, 10, 1000);
    c.markUnusable(0, 1000);
    expect(c.unusable(0, 1000)).toBe(true);
    // Every family goes to cell 1: its cap is of the load it carries alone, not of an average with cell 0.
    for (const r of families) expect(c.choose(r, 1000).cell).toBe(1);
    const moved = families.map((r) => c.choose(r, 1500));
    expect(moved.every((m) => m.cell === 1)).toBe(true);
    expect(moved.filter((_m, i) => home[i] === 0).every((m) => m.reason === "spill")).toBe(true);
    // The mark runs out (CELL_UNUSABLE_MS): home again.
    c.report(0, 10, 2000);
    c.report(1, 10, 2000);
    expect(families.map((r) => c.choose(r, 2000).cell)).toEqual(home);
    // Marked again, then its RouterDO answers with a backend in rotation: home at once.
    c.markUnusable(0, 2100);
    expect(c.choose(families[home.indexOf(0)]!, 2100).cell).toBe(1);
    c.markUsable(0);
    expect(families.map((r) => c.choose(r, 2100).cell)).toEqual(home);
  });

  it("every cell marked: none is passed over (each family at home, as before)", () => {
    const c = chooser(3);
    const home = families.map((r) => c.choose(r, 0).cell);
    for (let j = 0; j < 3; j++) c.markUnusable(j, 0);
    expect(families.map((r) => c.choose(r, 10).cell)).toEqual(home);
  });

  it("of three cells one marked: its families spread over the other two in their probe order", () => {
    const c = chooser(3);
    c.markUnusable(2, 0);
    for (const r of families) {
      const order = Array.from(c.ring.order(r.blocks[3]!)).filter((j) => j !== 2);
      expect(c.choose(r, 10).cell).toBe(order[0]);
    }
  });
});
