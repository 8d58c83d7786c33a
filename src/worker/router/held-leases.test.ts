import { describe, expect, it } from "vitest";
import { HeldLeases, type OpenLease } from "./held-leases";

const lease = (leaseId: string, instance: string, grantedAt = 0): OpenLease => ({
  leaseId,
  backendId: `b-${leaseId}`,
  instance,
  arm: "a",
  grantedAt,
  expiresAt: grantedAt + 600_000,
});

describe("HeldLeases", () => {
  it("hands back the leases of another instance when a new instance answers, once", () => {
    const h = new HeldLeases();
    expect(h.answered("cell", "i1", 0)).toEqual([]); // the first answer: nothing to compare with
    h.open("cell", lease("l1", "i1", 0), 0);
    h.open("cell", lease("l2", "i1", 10), 10);
    h.open("other", lease("l3", "j1", 10), 10);
    expect(h.answered("cell", "i1", 100)).toEqual([]); // same instance: it knows them
    h.close("cell", "l2");
    const again = h.answered("cell", "i2", 1_000);
    expect(again).toEqual([
      { leaseId: "l1", held: { backendId: "b-l1", instance: "i1", arm: "a", ageMs: 1_000 } },
    ]);
    expect(h.answered("cell", "i2", 1_100)).toEqual([]); // told once per change of instance
    // Another cell's leases are that cell's business.
    expect(h.held("other")).toBe(1);
  });

  it("forgets a lease never reported once it is past its TTL", () => {
    const h = new HeldLeases();
    h.open("cell", lease("old", "i1", 0), 0);
    h.open("cell", lease("new", "i1", 700_000), 700_000); // the sweep at 700 s drops "old"
    expect(h.held("cell")).toBe(1);
    h.answered("cell", "i1", 700_000);
    expect(h.answered("cell", "i2", 700_001).map((r) => r.leaseId)).toEqual(["new"]);
  });

  it("re-announces a lease with the key its route call carried, and one without a key without", () => {
    const h = new HeldLeases();
    h.answered("cell", "i1", 0);
    h.open("cell", { ...lease("k1", "i1", 0), key: "00000000000000aa" }, 0);
    h.open("cell", lease("k2", "i1", 0), 0);
    expect(h.answered("cell", "i2", 500)).toEqual([
      {
        leaseId: "k1",
        held: { backendId: "b-k1", instance: "i1", arm: "a", ageMs: 500 },
        key: "00000000000000aa",
      },
      { leaseId: "k2", held: { backendId: "b-k2", instance: "i1", arm: "a", ageMs: 500 } },
    ]);
  });
});
