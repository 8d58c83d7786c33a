/**
 * Reading and validating an inference request body, with bounded work:
 * the body is read as a stream and refused (413) as soon as it passes
 * MAX_BODY_BYTES, its JSON shape is checked on the bytes as they arrive
 * (400 json_too_complex, before JSON.parse), and the schemas stop at the
 * first bad element. Other errors are typed too (400 with the offending
 * field as `param`), and the body text is kept so unknown fields reach the
 * backend unchanged.
 */
import type { z } from "zod";
import { badRequest, unsupportedContentEncoding } from "../errors";
import { JsonShapeMeter } from "./json-shape";
import { type InferenceBody, type InferenceKind, parseInferenceBody } from "./openai-schemas";
import { readBodyBytes } from "./read-body";
import { MAX_BODY_BYTES, MAX_JSON_DEPTH, MAX_JSON_KEYS, MAX_JSON_VALUES } from "./request-limits";

const SHAPE_LIMITS = { maxDepth: MAX_JSON_DEPTH, maxValues: MAX_JSON_VALUES, maxKeys: MAX_JSON_KEYS };

export interface ParsedBody {
  readonly body: InferenceBody;
  /** The JSON exactly as parsed (unknown fields included). */
  readonly raw: Record<string, unknown>;
  /** The body as received: what the backend receives (plus stream_options when we add it). */
  readonly text: string;
}

/** One decoder for every request: a one-shot decode keeps no state, and constructing one per request costs. */
const UTF8 = new TextDecoder();

function pathOf(issue: z.core.$ZodIssue): string {
  return issue.path
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
    .join("")
    .replace(/^\./, "");
}

/**
 * A Content-Encoding other than identity: refused before reading, so a gzip body is named for what it is
 * rather than reported as invalid JSON (the OpenAI SDKs send bodies uncompressed).
 */
function refuseEncodedBody(req: Request): void {
  const encoding = req.headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== "" && encoding !== "identity")
    throw unsupportedContentEncoding(encoding);
}

/** `totalMs`: the whole body's deadline (REQUEST_BODY_TIMEOUT_MS; its default when not given). */
export async function readInferenceBody(
  req: Request,
  kind: InferenceKind,
  totalMs?: number,
): Promise<ParsedBody> {
  refuseEncodedBody(req);
  const meter = new JsonShapeMeter(SHAPE_LIMITS);
  const bytes = await readBodyBytes(req, MAX_BODY_BYTES, (chunk) => meter.feed(chunk), undefined, totalMs);
  const text = UTF8.decode(bytes);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw badRequest("We could not parse the JSON body of your request.", null, "invalid_json");
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw badRequest("The request body must be a JSON object.", null, "invalid_json");
  }
  const parsed = parseInferenceBody(kind, raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = pathOf(issue);
    throw badRequest(`'${param}' ${issue.message}`, param, "invalid_value");
  }
  return { body: parsed.data, raw: raw as Record<string, unknown>, text };
}
