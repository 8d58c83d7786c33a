/**
 * max_tokens as clients send it: the only output length a gateway learns.
 *
 * Workloads carry each answer's true length (the engines generate exactly
 * that many tokens), but a router in front of OpenAI-compatible servers
 * never sees it: it reads the request's max_tokens, which is an upper bound
 * the client chose before the answer existed, or nothing. This module turns
 * true lengths into what a client population would have sent; the router's
 * hint (RouteRequest.outputTokens) is that, and the engines still generate
 * the true length.
 *
 * The default model, `clients`, and why (sim/README.md, "The output hint"):
 * - absent on half the requests. The OpenAI SDKs send max_tokens only when
 *   the caller sets it, and the frameworks in front of them leave it unset by
 *   default (LangChain's ChatOpenAI since langchain#1771, pydantic-ai),
 *   so many production requests carry none; vLLM then lets the answer run to
 *   the end of the context. No public trace records how often it is sent:
 *   the share is an assumption, and `capped` / `absent` bracket it.
 * - otherwise a round cap at or above the true length (a cap below it would
 *   have cut the answer the trace recorded): the smallest of 256, 512, 1k,
 *   2k, ... that holds the answer, raised by 0–3 rungs with equal chance,
 *   because a client sizes its cap for its longest answers, not this one.
 *
 * Each request draws twice from one seeded stream (absent?, how many rungs
 * up), whatever the model, so two models on one seed differ only where
 * their rules do: `clients` and `capped` send the same cap where both send
 * one. Requests whose trace records what the client sent (OpenAI logs:
 * WorkloadRequest.sentMaxTokens) keep it under every model but `exact`.
 */
import { Rng } from "./workloads/prng";
import type { WorkloadRequest } from "./workloads/types";

export const MAX_TOKENS_MODEL_NAMES = ["clients", "capped", "tight", "absent", "exact"] as const;
export type MaxTokensModelName = (typeof MAX_TOKENS_MODEL_NAMES)[number];

export interface MaxTokensModel {
  readonly name: MaxTokensModelName;
  /** Share of requests that send no max_tokens. */
  readonly absentShare: number;
  /** A sent cap is the smallest rung holding the answer, raised by 0..maxRaise rungs (uniform). */
  readonly maxRaise: number;
  /** Send the true length itself: the clairvoyant hint the reports used before issue #11. */
  readonly exact: boolean;
  /** One line for reports. */
  readonly summary: string;
}

/** The smallest rung; rungs are FIRST_RUNG · 2^k (256, 512, 1024, ...). */
export const FIRST_RUNG = 256;

export const MAX_TOKENS_MODELS: Readonly<Record<MaxTokensModelName, MaxTokensModel>> = {
  clients: {
    name: "clients",
    absentShare: 0.5,
    maxRaise: 3,
    exact: false,
    summary:
      "no max_tokens on 50% of requests; otherwise the smallest of 256, 512, 1k, 2k, … at or above the true length, raised 0–3 rungs (uniform)",
  },
  capped: {
    name: "capped",
    absentShare: 0,
    maxRaise: 3,
    exact: false,
    summary:
      "every request sends a cap: the smallest of 256, 512, 1k, 2k, … at or above the true length, raised 0–3 rungs (uniform)",
  },
  tight: {
    name: "tight",
    absentShare: 0,
    maxRaise: 0,
    exact: false,
    summary: "every request sends the smallest of 256, 512, 1k, 2k, … at or above the true length",
  },
  absent: {
    name: "absent",
    absentShare: 1,
    maxRaise: 0,
    exact: false,
    summary: "no request sends max_tokens",
  },
  exact: {
    name: "exact",
    absentShare: 0,
    maxRaise: 0,
    exact: true,
    summary: "the true output length (clairvoyant; what the reports before issue #11 gave the router)",
  },
};

export const DEFAULT_MAX_TOKENS_MODEL: MaxTokensModelName = "clients";

export function isMaxTokensModel(name: string): name is MaxTokensModelName {
  return (MAX_TOKENS_MODEL_NAMES as readonly string[]).includes(name);
}

/** The smallest rung (256 · 2^k) at or above `tokens`. */
export function roundCap(tokens: number): number {
  let cap = FIRST_RUNG;
  while (cap < tokens) cap *= 2;
  return cap;
}

/**
 * What each request's client sends as max_tokens (undefined: none), in
 * request order; a pure function of the requests, the model and the seed.
 */
export function clientMaxTokens(
  requests: readonly WorkloadRequest[],
  model: MaxTokensModel,
  seed: number,
): (number | undefined)[] {
  const rng = new Rng(seed).fork("client-max-tokens");
  return requests.map((r) => {
    const absent = rng.next() < model.absentShare;
    const raise = Math.floor(rng.next() * (model.maxRaise + 1));
    if (model.exact) return r.outputTokens;
    if (r.sentMaxTokens !== undefined) return r.sentMaxTokens ?? undefined;
    return absent ? undefined : roundCap(r.outputTokens) * 2 ** raise;
  });
}

/** What the hints of one run were like, for reports. */
export interface HintStats {
  /** Share of requests that sent max_tokens. */
  readonly sentShare: number;
  /** Over the requests that sent one: Σ max_tokens ÷ Σ true output tokens (1 = the true lengths). */
  readonly sentOverTrue: number;
}

export function hintStats(
  requests: readonly WorkloadRequest[],
  maxTokens: readonly (number | undefined)[],
): HintStats {
  let sent = 0;
  let sentTokens = 0;
  let trueTokens = 0;
  requests.forEach((r, i) => {
    const m = maxTokens[i];
    if (m === undefined) return;
    sent++;
    sentTokens += m;
    trueTokens += r.outputTokens;
  });
  return {
    sentShare: requests.length > 0 ? sent / requests.length : 0,
    sentOverTrue: trueTokens > 0 ? sentTokens / trueTokens : Number.NaN,
  };
}
