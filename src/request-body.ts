/**
 * Reading and validating an inference request body. Errors are typed
 * (400 with the offending field as `param`, 413 past the size cap), and the
 * body text is kept so unknown fields reach the backend unchanged.
 */
import type { z } from "zod";
import { badRequest, GatewayError } from "./errors";
import {
  chatBodySchema,
  completionsBodySchema,
  type InferenceBody,
  type InferenceKind,
} from "./openai-schemas";

/** Requests above this are refused (413): 16 MiB leaves room for 128k-token prompts and inline images. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

const tooLarge = () =>
  new GatewayError(
    413,
    "invalid_request_error",
    "request_too_large",
    `Request body exceeds ${MAX_BODY_BYTES} bytes.`,
  );

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

export async function readInferenceBody(req: Request, kind: InferenceKind): Promise<ParsedBody> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const bytes = await req.arrayBuffer();
  if (bytes.byteLength > MAX_BODY_BYTES) throw tooLarge();
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
  const schema = kind === "chat" ? chatBodySchema : completionsBodySchema;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = pathOf(issue);
    throw badRequest(`'${param}' ${issue.message}`, param, "invalid_value");
  }
  return { body: parsed.data, raw: raw as Record<string, unknown>, text };
}
