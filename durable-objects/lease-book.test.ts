import { describe, expect, it } from "vitest";
import { LeaseBook } from "./lease-book";

const lease = (id: string, key: string | undefined, deadline = 100) => ({
  id,
  backendId: "b",
  ticket: id,
  deadline,
  ...(key !== undefined ? { key } : {}),
});

describe("LeaseBook: slots held per key (src/routing/key-share.ts reads them)", () => {
  it("counts each key's leases and gives them back on take and on expiry, the only ways a lease ends", () => {
    const book = new LeaseBook<string>();
    book.add(lease("1", "a", 10));
    book.add(lease("2", "a", 50));
    book.add(lease("3", "b", 10));
    book.add(lease("4", undefined, 10));
    expect([book.heldBy("a"), book.heldBy("b")]).toEqual([2, 1]);
    expect([...book.holders()].sort()).toEqual(["a", "b"]);
    book.take("2");
    book.take("2");
    expect(book.heldBy("a")).toBe(1);
    expect(book.expire(10).map((l) => l.id)).toEqual(["1", "3", "4"]);
    expect([book.heldBy("a"), book.heldBy("b"), [...book.holders()].length]).toEqual([0, 0, 0]);
  });

  it("a lease added again under its id is counted once, under its latest key", () => {
    const book = new LeaseBook<string>();
    book.add(lease("1", "a"));
    book.add(lease("1", "b"));
    expect([book.heldBy("a"), book.heldBy("b"), book.size]).toEqual([0, 1, 1]);
  });
});
