import { describe, expect, it } from "vitest";
import { withUniqueBodyIds } from "./upstream-body-ids";

const run = (text: string) =>
  withUniqueBodyIds(text, JSON.parse(text) as Record<string, unknown>, "00ff00ff00ff");

describe("withUniqueBodyIds", () => {
  it("suffixes a string rid, every copy of a duplicated one, and each of a list; nothing else moves", () => {
    expect(run(`{"rid":"a","seed":18014398509481985}`)).toBe(
      `{"rid":"a-00ff00ff00ff","seed":18014398509481985}`,
    );
    expect(run(`{"rid":"a", "rid" : "b"}`)).toBe(`{"rid":"b-00ff00ff00ff", "rid" : "b-00ff00ff00ff"}`);
    expect(run(`{"rid":["a","b"]}`)).toBe(`{"rid":["a-00ff00ff00ff","b-00ff00ff00ff"]}`);
    expect(run(`{"r\\u0069d":"\\u00e9\\"q"}`)).toBe(`{"r\\u0069d":"é\\"q-00ff00ff00ff"}`);
  });

  it("leaves a body without one, a rid that is not a string (or list of them), and request_id alone", () => {
    for (const text of [`{"a":1}`, `{"rid":7}`, `{"rid":null}`, `{"rid":["a",1]}`, `{"request_id":"x"}`])
      expect(run(text)).toBe(text);
  });
});
