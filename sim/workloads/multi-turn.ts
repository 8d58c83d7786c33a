/**
 * multi-turn chat: conversations whose prompt at turn k is
 *   system prompt + (question_1 + answer_1) + ... + (question_{k-1} + answer_{k-1}) + question_k
 * and whose answer_k has exactly the turn's output tokens, so the next turn's
 * prompt extends this turn's prompt plus its answer (what a chat client sends).
 *
 * Sizes (chosen to resemble chat assistants, documented here, not tuned):
 * - 8 system prompts of 1024 tokens (8 apps), each conversation picks one uniformly;
 * - 3..10 turns per conversation (uniform), question 32..256 tokens, answer 64..512 tokens;
 * - the user sends turn k+1 after a nominal reply time (answer × 25 ms/token, a
 *   typical decode speed; the generator is simulator-free so it cannot know the
 *   real one) plus an exponential think time of mean 10 s;
 * - conversations start as a Poisson process at rate / mean turns, so the
 *   long-run request rate is `rate`; conversations are added until `requests`
 *   requests exist (the last one may be cut short).
 */
import { Rng } from "./prng";
import { checkCommon, checkCount, segmentRequest } from "./request";
import { DEFAULT_BLOCK_TOKENS } from "./segments";
import type { Segment, Workload, WorkloadRequest } from "./types";

export interface MultiTurnOptions {
  readonly rate: number;
  readonly seed: number;
  readonly requests?: number;
  readonly systemPrompts?: number;
  readonly systemPromptTokens?: number;
  readonly minTurns?: number;
  readonly maxTurns?: number;
  readonly minQuestionTokens?: number;
  readonly maxQuestionTokens?: number;
  readonly minAnswerTokens?: number;
  readonly maxAnswerTokens?: number;
  readonly thinkTimeMeanMs?: number;
  readonly decodeMsPerToken?: number;
}

export function multiTurn(opts: MultiTurnOptions): Workload {
  checkCommon(opts);
  const n = opts.requests ?? 2000;
  checkCount("requests", n);
  const systems = opts.systemPrompts ?? 8;
  const sysTokens = opts.systemPromptTokens ?? 1024;
  const minTurns = opts.minTurns ?? 3;
  const maxTurns = opts.maxTurns ?? 10;
  if (!(minTurns >= 1 && maxTurns >= minTurns)) throw new RangeError("need 1 <= minTurns <= maxTurns");
  const qLo = opts.minQuestionTokens ?? 32;
  const qHi = opts.maxQuestionTokens ?? 256;
  const aLo = opts.minAnswerTokens ?? 64;
  const aHi = opts.maxAnswerTokens ?? 512;
  const think = opts.thinkTimeMeanMs ?? 10_000;
  const msPerToken = opts.decodeMsPerToken ?? 25;
  const convRate = opts.rate / ((minTurns + maxTurns) / 2);

  const rng = new Rng(opts.seed);
  const starts = rng.fork("starts");
  const shape = rng.fork("shape");
  const out: WorkloadRequest[] = [];
  let start = 0;
  for (let c = 0; out.length < n; c++) {
    start += starts.exponential(1000 / convRate);
    const turns = shape.int(minTurns, maxTurns);
    const history: Segment[] = [
      { key: `mt/${opts.seed}/sys/${shape.int(0, systems - 1)}`, tokens: sysTokens },
    ];
    let t = start;
    for (let k = 0; k < turns && out.length < n; k++) {
      const question: Segment = { key: `mt/${opts.seed}/c${c}/q${k}`, tokens: shape.int(qLo, qHi) };
      const answerTokens = shape.int(aLo, aHi);
      history.push(question);
      out.push(segmentRequest(t, history.slice(), answerTokens));
      history.push({ key: `mt/${opts.seed}/c${c}/a${k}`, tokens: answerTokens });
      t += answerTokens * msPerToken + shape.exponential(think);
    }
  }
  out.sort((a, b) => a.arrivalMs - b.arrivalMs);
  return { name: "multi-turn", blockTokens: DEFAULT_BLOCK_TOKENS, malformed: 0, requests: out };
}
