/** CORS_ALLOW_ORIGINS parsing, the Allow-Origin decision, and the Allow-Headers list against the OpenAI SDK's. */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { CORS_ALLOW_HEADERS } from "./cors";
import { allowOriginFor, parseCorsOrigins } from "./cors-origins";

function issuesOf(raw: string): string[] {
  const r = parseCorsOrigins(raw);
  if (r.ok) throw new Error(`${raw} was accepted`);
  return r.issues.map((i) => `${i.index ?? "-"}: ${i.message}`);
}

describe("parseCorsOrigins", () => {
  it("is off when empty", () => {
    for (const raw of ["", "  "]) expect(parseCorsOrigins(raw)).toEqual({ ok: true, cors: { mode: "off" } });
  });

  it("takes * alone as any origin", () => {
    expect(parseCorsOrigins(" * ")).toEqual({ ok: true, cors: { mode: "any" } });
    expect(issuesOf("*, https://a.example")).toEqual([
      "-: * must stand alone (it already allows every origin)",
    ]);
  });

  it("takes exact origins, skipping empty entries", () => {
    const r = parseCorsOrigins("https://a.example, http://localhost:5173,, http://[::1]:8080 ,");
    expect(r.ok && r.cors.mode === "list" && [...r.cors.origins]).toEqual([
      "https://a.example",
      "http://localhost:5173",
      "http://[::1]:8080",
    ]);
  });

  it.each([
    [",", "-: must be empty (off), * or a comma-separated list of origins"],
    ["https://a.example/", '0: "https://a.example/" is not an origin as browsers send it'],
    ["https://a.example/app", '"https://a.example"?'],
    ["https://A.example", '"https://a.example"?'],
    ["https://a.example:443", '"https://a.example"?'],
    ["a.example", '0: "a.example" is not an http(s) origin'],
    ["ftp://a.example", "is not an http(s) origin"],
    ["https://*.example.com", "has a wildcard"],
    ["null", "cannot be allowed"],
    // Positions count empty entries: the operator finds the third one where it is.
    ["https://a.example,, https://b.example/", '2: "https://b.example/" is not an origin'],
  ])("refuses %j, naming the entry", (raw, expected) => {
    expect(issuesOf(raw).join("; ")).toContain(expected);
  });
});

describe("allowOriginFor", () => {
  const list = parseCorsOrigins("https://a.example");
  if (!list.ok) throw new Error("fixture");
  it("reflects a listed origin only, never an unlisted one", () => {
    expect(allowOriginFor(list.cors, "https://a.example")).toBe("https://a.example");
    expect(allowOriginFor(list.cors, "https://b.example")).toBeUndefined();
    expect(allowOriginFor(list.cors, "https://a.example.evil")).toBeUndefined();
    expect(allowOriginFor(list.cors, "null")).toBeUndefined();
    expect(allowOriginFor(list.cors, undefined)).toBeUndefined();
  });
  it("answers * to anyone in any mode, nothing when off", () => {
    expect(allowOriginFor({ mode: "any" }, "https://b.example")).toBe("*");
    expect(allowOriginFor({ mode: "off" }, "https://a.example")).toBeUndefined();
  });
});

describe("CORS_ALLOW_HEADERS", () => {
  // The headers the installed SDK really sends on a chat call (a retry included): a new one in an SDK upgrade
  // would make every browser preflight fail, so it must show up here first.
  it("covers every header the openai SDK sends, but the ones a browser sets itself", async () => {
    const sent = new Set<string>();
    let calls = 0;
    const client = new OpenAI({
      apiKey: "k",
      baseURL: "https://gateway.test/v1",
      organization: "org",
      project: "proj",
      maxRetries: 1,
      fetch: async (_url, init) => {
        for (const [name] of new Headers(init?.headers)) sent.add(name);
        // The first call is refused with a retry-after of 0, so the SDK's retry (retry-count 1) is seen too.
        if (calls++ === 0) return new Response("{}", { status: 429, headers: { "retry-after-ms": "0" } });
        return Response.json({ id: "x", object: "chat.completion", created: 0, model: "m", choices: [] });
      },
    });
    await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(calls).toBe(2);
    // A browser sets user-agent itself (the SDK leaves it out there); accept is CORS-safelisted.
    const needed = [...sent].filter((h) => h !== "user-agent" && h !== "accept");
    expect(needed).toContain("x-stainless-retry-count");
    expect(needed.filter((h) => !(CORS_ALLOW_HEADERS as readonly string[]).includes(h))).toEqual([]);
  });
});
