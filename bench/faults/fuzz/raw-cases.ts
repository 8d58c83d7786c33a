/**
 * Transport abuse as raw bytes on a socket: framing that lies about the body
 * (content-length past or short of it, both framings, bad chunk sizes,
 * bodies that pause, stall or are cut), odd methods and paths sent as they
 * are, oversized, many, repeated or non-ASCII headers, and bytes that are
 * not HTTP at all.
 */
import type { Rng } from "../../../sim/workloads/prng";
import { MODEL } from "../rig";
import { BOUND_MS, type CaseKeys, pick, type RawCase, STALL_BOUND_MS } from "./case-types";
import { type InferencePath, mutatedBody } from "./mutations";

const utf8 = new TextEncoder();

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function smallValidBody(rng: Rng): { path: InferencePath; bytes: Uint8Array } {
  const stream = rng.next() < 0.5;
  return {
    path: "/v1/chat/completions",
    bytes: utf8.encode(
      JSON.stringify({
        model: MODEL,
        stream,
        max_tokens: rng.int(1, 6),
        messages: [{ role: "user", content: "hi" }],
      }),
    ),
  };
}

/** An HTTP/1.1 head, CRLF-terminated, from a request line and header lines. */
function head(requestLine: string, lines: readonly string[]): Uint8Array {
  return utf8.encode(`${requestLine}\r\n${lines.map((l) => `${l}\r\n`).join("")}\r\n`);
}

function raw(
  label: string,
  parts: RawCase["parts"],
  end: RawCase["end"],
  boundMs = BOUND_MS,
  method = "POST",
): RawCase {
  return { kind: "raw", label, parts, end, boundMs, method };
}

const now = (bytes: Uint8Array) => ({ bytes, delayMs: 0 });

/** Framing that lies about the body: lengths, chunking, stalls. */
export function framing(rng: Rng, keys: CaseKeys, stall: boolean): RawCase {
  const { path, bytes } = rng.next() < 0.5 ? smallValidBody(rng) : mutatedBody(rng, MODEL);
  const auth = `Authorization: Bearer ${keys.fuzzKey}`;
  const base = ["Host: 127.0.0.1", auth, "Content-Type: application/json"];
  if (stall) {
    if (rng.next() < 0.5)
      return raw(
        "stall: content-length past the body, left open",
        [
          now(
            head(`POST ${path} HTTP/1.1`, [
              ...base,
              `Content-Length: ${bytes.length + rng.int(1, 1000)}`,
              "Connection: close",
            ]),
          ),
          now(bytes),
        ],
        "keep",
        STALL_BOUND_MS,
      );
    return raw(
      "stall: chunked body never terminated",
      [
        now(head(`POST ${path} HTTP/1.1`, [...base, "Transfer-Encoding: chunked", "Connection: close"])),
        now(utf8.encode(`${bytes.length.toString(16)}\r\n`)),
        now(concat(bytes, utf8.encode("\r\n"))),
      ],
      "keep",
      STALL_BOUND_MS,
    );
  }
  const r = rng.int(0, 8);
  const close = "Connection: close";
  switch (r) {
    case 0:
      return raw(
        "content-length past the body, half-closed",
        [
          now(
            head(`POST ${path} HTTP/1.1`, [
              ...base,
              `Content-Length: ${bytes.length + rng.int(1, 1000)}`,
              close,
            ]),
          ),
          now(bytes),
        ],
        "half-close",
      );
    case 1:
      return raw(
        "content-length short of the body",
        [
          now(
            head(`POST ${path} HTTP/1.1`, [
              ...base,
              `Content-Length: ${rng.int(0, Math.max(0, bytes.length - 1))}`,
              close,
            ]),
          ),
          now(bytes),
        ],
        "keep",
      );
    case 2:
      return raw(
        "no content-length, no chunking",
        [now(head(`POST ${path} HTTP/1.1`, [...base, close])), now(bytes)],
        "keep",
      );
    case 3:
      return raw(
        "content-length and chunked both",
        [
          now(
            head(`POST ${path} HTTP/1.1`, [
              ...base,
              "Content-Length: 4",
              "Transfer-Encoding: chunked",
              close,
            ]),
          ),
          now(concat(utf8.encode(`${bytes.length.toString(16)}\r\n`), bytes, utf8.encode("\r\n0\r\n\r\n"))),
        ],
        "keep",
      );
    case 4:
      return raw(
        "bad chunk size",
        [
          now(head(`POST ${path} HTTP/1.1`, [...base, "Transfer-Encoding: chunked", close])),
          now(
            concat(
              utf8.encode(pick(rng, ["zz\r\n", "-1\r\n", "fffffffffffffffff\r\n", "1;x=\u0000\r\n"])),
              bytes,
            ),
          ),
        ],
        "keep",
      );
    case 5: {
      // A chunked body that pauses between pieces (well within the 30-s idle deadline), then ends.
      const cuts = Array.from({ length: rng.int(2, 5) }, () => rng.int(0, bytes.length)).sort(
        (a, b) => a - b,
      );
      const pieces: { bytes: Uint8Array; delayMs: number }[] = [];
      let from = 0;
      for (const c of [...cuts, bytes.length]) {
        const piece = bytes.subarray(from, c);
        from = c;
        if (piece.length === 0) continue;
        pieces.push({
          bytes: concat(utf8.encode(`${piece.length.toString(16)}\r\n`), piece, utf8.encode("\r\n")),
          delayMs: rng.int(100, 2500),
        });
      }
      pieces.push({ bytes: utf8.encode("0\r\n\r\n"), delayMs: rng.int(0, 1000) });
      return raw(
        "chunked body with pauses",
        [now(head(`POST ${path} HTTP/1.1`, [...base, "Transfer-Encoding: chunked", close])), ...pieces],
        "keep",
      );
    }
    case 6:
      if (rng.next() < 0.5) {
        // Part of the body, then the connection is dropped (no half-close: gone).
        const cut = bytes.subarray(0, rng.int(0, bytes.length - 1));
        return raw(
          "body cut, then gone",
          [
            now(head(`POST ${path} HTTP/1.1`, [...base, `Content-Length: ${bytes.length}`])),
            now(cut),
            { bytes: new Uint8Array(), delayMs: rng.int(0, 2000) },
          ],
          "close",
        );
      }
      return raw(
        "HTTP/1.0 without Host",
        [now(head(`POST ${path} HTTP/1.0`, [auth, `Content-Length: ${bytes.length}`])), now(bytes)],
        "keep",
      );
    case 7:
      return raw(
        "Expect: 100-continue",
        [
          now(
            head(`POST ${path} HTTP/1.1`, [
              ...base,
              "Expect: 100-continue",
              `Content-Length: ${bytes.length}`,
              close,
            ]),
          ),
          { bytes, delayMs: rng.int(0, 1500) },
        ],
        "keep",
      );
    default: {
      // Two requests on one connection: a valid one, then damaged bytes.
      const first = head(`POST ${path} HTTP/1.1`, [...base, `Content-Length: ${bytes.length}`]);
      const second = utf8.encode(
        pick(rng, [
          "GARBAGE\r\n\r\n",
          `POST ${path} HTTP/1.1\r\nContent-Length: 99\r\n${close}\r\n\r\n{`,
          "\u0000\u0000\r\n\r\n",
        ]),
      );
      return raw("pipelined: valid, then damaged", [now(concat(first, bytes, second))], "half-close");
    }
  }
}

const PATHS = [
  "/v1/chat/completions",
  "/v1/completions",
  "/v1/models",
  "/healthz",
  "/metrics",
  "/admin/stats",
  "/v1/embeddings",
  "/",
  "*",
  "/v1/chat/completions/",
  "//v1//chat//completions",
  "/V1/CHAT/COMPLETIONS",
  "/v1/chat%2Fcompletions",
  "/v1/chat/completions/../../admin/stats",
  "/v1/%2e%2e/admin/stats",
  "/v1/models/%00",
  "/v1/models/..%2F..%2Fadmin%2Fstats",
  "/admin/backends/emu-1/drain",
  "/admin/pools/%FF/reset-affinity",
  "/v1/chat/completions?x=%ZZ",
  "http://evil.example/v1/chat/completions",
  "/v1/models/😀",
];

/** Methods a Worker receives; workerd refuses the others itself (lower case, unknown tokens, CONNECT). */
const STANDARD_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "HEAD"];

/** Methods and paths, sent as they are. */
export function methodPath(rng: Rng, keys: CaseKeys): RawCase {
  const method = pick(rng, [
    "GET",
    "POST",
    "PUT",
    "DELETE",
    "PATCH",
    "OPTIONS",
    "TRACE",
    "PROPFIND",
    "HEAD",
    "get",
    "FOO",
    "CONNECT",
  ]);
  let path = pick(rng, PATHS);
  if (rng.next() < 0.15) path = `/v1/${"a/".repeat(rng.int(100, 6000))}`;
  const key = rng.next() < 0.7 ? keys.fuzzKey : "wrong";
  const body = method === "GET" || method === "HEAD" ? new Uint8Array() : smallValidBody(rng).bytes;
  const lines = [
    "Host: 127.0.0.1",
    `Authorization: Bearer ${key}`,
    `Content-Length: ${body.length}`,
    "Connection: close",
  ];
  const c = raw(
    `method/path ${method} ${path.slice(0, 40)}`,
    [now(concat(head(`${method} ${path} HTTP/1.1`, lines), body))],
    "keep",
    BOUND_MS,
    method,
  );
  return STANDARD_METHODS.includes(method) ? c : { ...c, runtimeMayRefuse: true };
}

/** Headers: oversized, many, repeated Authorization, bytes outside ASCII. */
export function oddHeaders(rng: Rng, keys: CaseKeys): RawCase {
  const { path, bytes } = smallValidBody(rng);
  const good = `Authorization: Bearer ${keys.fuzzKey}`;
  const bad = `Authorization: Bearer ${pick(rng, ["nope", keys.adminToken, "", `${keys.fuzzKey}x`])}`;
  const r = rng.int(0, 4);
  const tail = ["Content-Type: application/json", `Content-Length: ${bytes.length}`, "Connection: close"];
  let lines: string[];
  let label: string;
  if (r === 0) {
    lines = [good, `X-Big: ${"b".repeat(rng.int(8_000, 1_000_000))}`];
    label = "one oversized header";
  } else if (r === 1) {
    lines = [good, ...Array.from({ length: rng.int(100, 3000) }, (_, i) => `X-H${i}: v`)];
    label = "many headers";
  } else if (r === 2) {
    lines = pick(rng, [
      [good, bad],
      [bad, good],
      [good, good],
    ]);
    label = "repeated Authorization";
  } else if (r === 3) {
    lines = [good, `x-request-id: ${"\u00ff".repeat(rng.int(1, 50))}`, "x-prefix-cache-key: \u00e9\u00ff"];
    label = "latin-1 header bytes";
  } else {
    lines = [
      `Authorization: ${pick(rng, ["Bearer", "Basic Zm9vOmJhcg==", `bearer  ${keys.fuzzKey}`, `Bearer ${keys.fuzzKey} extra`, "Token x", "Bearer \t"])}`,
    ];
    label = "odd Authorization scheme";
  }
  const encoded = Uint8Array.from(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${[...lines, ...tail].join("\r\n")}\r\n\r\n`,
    (c) => c.charCodeAt(0) & 0xff,
  );
  return raw(label, [now(concat(encoded, bytes))], "keep");
}

/** Bytes that are not a whole HTTP request: a head cut off, a TLS hello, noise. */
export function notHttp(rng: Rng): RawCase {
  const r = rng.int(0, 2);
  if (r === 0) {
    const h = utf8.encode(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bea`);
    return raw(
      "head cut off, then gone",
      [now(h), { bytes: new Uint8Array(), delayMs: rng.int(200, 3000) }],
      "close",
    );
  }
  if (r === 1)
    return raw(
      "TLS ClientHello on plain HTTP",
      [now(Uint8Array.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03]))],
      "half-close",
    );
  return raw(
    "random bytes",
    [now(Uint8Array.from({ length: rng.int(1, 2000) }, () => rng.int(0, 255)))],
    "half-close",
  );
}
