import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { type JsonRecord, readJsonRecords } from "./json-records";

/** The input cut into chunks of `size` bytes, so records and lines straddle chunk boundaries. */
async function read(text: string, size = 7, maxRecordBytes?: number): Promise<JsonRecord[]> {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const out: JsonRecord[] = [];
  for await (const r of readJsonRecords(
    Readable.from(chunks),
    maxRecordBytes !== undefined ? { maxRecordBytes } : {},
  ))
    out.push(r);
  return out;
}

describe("readJsonRecords", () => {
  it("reads JSONL and wrangler's pretty-printed events, mixed, with their first line numbers", async () => {
    const pretty = JSON.stringify(
      { logs: [{ message: ['{"msg":"request"}'] }], n: { deep: [1, { x: "}" }] } },
      null,
      4,
    );
    const text = `{"a":1}\r\n\n${pretty}\n{"b":"é"}\n${pretty}`;
    const got = await read(text);
    expect(got.map((r) => [r.kind, r.line])).toEqual([
      ["object", 1],
      ["object", 3],
      ["object", 3 + pretty.split("\n").length],
      ["object", 4 + pretty.split("\n").length],
    ]);
    expect(got[2]).toMatchObject({ value: { b: "é" } });
    expect(got[1]).toMatchObject({ value: JSON.parse(pretty) });
  });

  it("counts what it cannot read and goes on", async () => {
    const text = [
      '{"ok":1}',
      "{not json",
      "{", // an object cut off by the next one
      '    "half": true,',
      "{",
      '    "whole": true',
      "}",
      `{"too long": "${"x".repeat(200)}"}`,
      '{"ok":2}',
      "{",
      '    "cut": "by the end"',
    ].join("\n");
    const got = await read(text, 5, 100);
    expect(
      got.map((r) => (r.kind === "malformed" ? `${r.line}: ${r.reason}` : r.kind === "object" ? r.value : r)),
    ).toEqual([
      { ok: 1 },
      "2: not JSON",
      "3: object cut off before its closing brace",
      { whole: true },
      "8: line longer than 100 bytes",
      { ok: 2 },
      "10: object cut off by the end of the input",
    ]);
  });

  it("tells text around the log (npm run dev's terminal) from a broken record", async () => {
    const text = [
      " ⛅️ wrangler 4.x",
      "[wrangler:inf] Ready on http://localhost:8787",
      '{"msg":"request","requestId":"r1"}',
      "[wrangler:inf] POST /v1/chat/completions 200 OK (12ms)",
      '{"msg":"request","requestId":"r2"',
      "[1, 2]",
    ].join("\n");
    const got = await read(text);
    expect(got.map((r) => [r.kind, r.line])).toEqual([
      ["text", 1],
      ["text", 2],
      ["object", 3],
      ["text", 4],
      ["malformed", 5],
      ["object", 6],
    ]);
  });

  it("drops a pretty-printed object that grows past the cap without keeping it", async () => {
    const big = JSON.stringify({ rows: Array.from({ length: 50 }, (_, i) => `row ${i}`) }, null, 4);
    const got = await read(`${big}\n{"after":1}\n`, 64, 200);
    expect(got.map((r) => (r.kind === "malformed" ? r.reason : r.kind === "object" ? r.value : r))).toEqual([
      "object longer than 200 bytes",
      { after: 1 },
    ]);
  });
});
