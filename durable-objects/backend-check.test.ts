import { describe, expect, it } from "vitest";
import { BackendChecker } from "./backend-check";

/** A fleet whose /v1/models answers are set per host by the test. */
function fleet() {
  const answers = new Map<string, () => Response>();
  const asked: string[] = [];
  const f = (async (input: RequestInfo | URL) => {
    const url = new URL(String(input));
    asked.push(url.host);
    const a = answers.get(url.host);
    if (a === undefined) throw new TypeError("connect ECONNREFUSED");
    return a();
  }) as typeof fetch;
  return { answers, asked, f };
}

const list =
  (...ids: string[]) =>
  () =>
    new Response(JSON.stringify({ object: "list", data: ids.map((id) => ({ id })) }));

function setup() {
  let now = 1_000_000;
  const lines: { line: Record<string, unknown>; level: string }[] = [];
  const net = fleet();
  const checker = new BackendChecker(
    net.f,
    () => now,
    (line, level) => lines.push({ line: JSON.parse(line) as Record<string, unknown>, level }),
  );
  return {
    checker,
    net,
    lines,
    advance: (ms: number) => {
      now += ms;
      return now;
    },
    now: () => now,
  };
}

const A = { id: "a", url: "http://a:8000" };
const B = { id: "b", url: "http://b:8000" };

describe("BackendChecker", () => {
  it("off: never due", () => {
    const t = setup();
    t.checker.configure(0, "m", [A, B]);
    t.checker.routed(t.now());
    expect(t.checker.nextAt()).toBeUndefined();
  });

  it("switched on, checks every backend at once (never a non-finite due time)", () => {
    const t = setup();
    t.checker.configure(0, "m", [A, B]);
    t.checker.routed(t.now());
    t.checker.configure(60, "m", [A, B]);
    expect(t.checker.nextAt()).toBe(t.now());
    expect(t.checker.due(t.now())).toBe(true);
  });

  it("checks new backends at once, then every interval while the pool routes, and stops when it idles", async () => {
    const t = setup();
    t.net.answers.set("a:8000", list("m"));
    t.net.answers.set("b:8000", list("m"));
    t.checker.configure(60, "m", [A, B]);
    expect(t.checker.due(t.now())).toBe(true);
    await t.checker.run(t.now());
    expect(t.net.asked.sort()).toEqual(["a:8000", "b:8000"]);
    // Nothing routed since: idle, no round.
    expect(t.checker.nextAt()).toBeUndefined();
    t.checker.routed(t.advance(1000));
    expect(t.checker.nextAt()).toBe(t.now() - 1000 + 60_000);
    expect(t.checker.due(t.advance(58_000))).toBe(false);
    expect(t.checker.due(t.advance(1000))).toBe(true);
    // A backend that joins (or moves) is due at once, whatever the interval.
    await t.checker.run(t.now());
    t.checker.configure(60, "m", [A, { id: "b", url: "http://b2:8000" }]);
    expect(t.checker.due(t.now())).toBe(true);
  });

  it("logs one line per change of state: a warning when it goes wrong, info when it is over; none for a first ok", async () => {
    const t = setup();
    t.net.answers.set("a:8000", list("m"));
    t.net.answers.set("b:8000", list("other"));
    t.checker.configure(10, "m", [A, B]);
    const round = async () => {
      t.checker.routed(t.now());
      t.advance(10_000);
      await t.checker.run(t.now());
    };
    await t.checker.run(t.now());
    expect(t.lines).toHaveLength(1);
    expect(t.lines[0]).toEqual({
      level: "warn",
      line: expect.objectContaining({
        msg: "backend_check",
        model: "m",
        backend: "b",
        state: "model_not_listed",
        was: "unchecked",
        listed: ["other"],
      }),
    });
    await round();
    await round();
    expect(t.lines).toHaveLength(1);
    // The same problem with another status is a change; so is its end.
    t.net.answers.set("b:8000", () => new Response("no", { status: 404 }));
    await round();
    t.net.answers.set("b:8000", () => new Response("no", { status: 502 }));
    await round();
    t.net.answers.set("b:8000", list("m"));
    await round();
    await round();
    expect(t.lines.map((l) => [l.level, l.line.state, l.line.status])).toEqual([
      ["warn", "model_not_listed", 200],
      ["warn", "bad_status", 404],
      ["warn", "bad_status", 502],
      ["info", "ok", 200],
    ]);
    expect(t.checker.status().backends.b).toMatchObject({ state: "ok", model: "listed" });
  });

  it("a backend that left the pool while it was checked is not recorded", async () => {
    const t = setup();
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    t.net.answers.set("a:8000", list("m"));
    const checker = new BackendChecker(
      (async (input: RequestInfo | URL, init?: RequestInit) => {
        if (String(input).startsWith(B.url)) await held;
        return t.net.f(input, init);
      }) as typeof fetch,
      () => t.now(),
      () => {},
    );
    checker.configure(10, "m", [A, B]);
    const round = checker.run(t.now());
    checker.configure(10, "m", [A]);
    release();
    await round;
    expect(Object.keys(checker.status().backends)).toEqual(["a"]);
  });
});
