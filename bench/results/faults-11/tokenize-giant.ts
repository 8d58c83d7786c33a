import { encodeO200k } from "../../../src/prefix/tokenizer";
for (const [u, n] of [["a", 220000], ["长", 27000], ["😀", 27000], ["\\", 110000], [" ", 3500000], ["<|endoftext|>", 4600]] as const) {
  const t0 = performance.now();
  const r = encodeO200k(`user: ${u.repeat(n)}\n`);
  console.log(JSON.stringify(u), n, r.tokens.length, Math.round(performance.now() - t0), "ms");
}
