/**
 * review-11: how many characters runExcessTokens reads of 40,000-character texts (deterministic), and a
 * batch's later prompt of spaces as the Worker's count names it. Run: npx tsx bench/results/review-11/run-excess-reads.ts
 */
import { prefixKeysForRequest } from "../../../src/prefix/request-keys";
import { runExcessTokens } from "../../../src/prefix/run-excess";

const prose = "The gateway routes each request to the backend that holds its prefix, when it can. ";
const reads = (text: string) => {
  let n = 0;
  const counted = {
    length: text.length,
    charCodeAt: (i: number) => {
      n++;
      return text.charCodeAt(i);
    },
  };
  runExcessTokens(counted as unknown as string);
  return n;
};
const size = 40_000;
const texts: [string, string][] = [
  ["prose", prose],
  ["abcd", "abcd"],
  ["ab", "ab"],
  ["aaab", "aaab"],
  ["spaces", " "],
];
for (const [name, unit] of texts)
  console.log(name, size, reads(unit.repeat(Math.floor(size / unit.length))));
const opts = { model: "m", blockTokens: 16, prefixTokens: 1024 };
const batch = prefixKeysForRequest("completions", { prompt: [prose.repeat(200), " ".repeat(1_000_000)] }, opts);
console.log("batch [prose, 1e6 spaces]: promptTokens", batch.promptTokens, "unconfirmedTokens", batch.unconfirmedTokens);
