/**
 * A deterministic tokenizer corpus, shared by the node and workerd tests: the
 * cases where a BPE re-implementation tends to drift from tiktoken —
 * contractions, digit runs, whitespace before newlines, CJK without spaces
 * (one long piece), symbol and emoji runs (long pieces around the
 * rescan/heap threshold), combining marks, lone surrogates, special-token
 * text — plus seeded random Unicode. Pure TypeScript (no node:*), so the
 * workerd test can import it.
 */

/** mulberry32: a tiny seeded PRNG, so the corpus is the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIXED: readonly string[] = [
  "",
  " ",
  "Hello world",
  "hello world\n",
  "I'm sure they'll say it's John's, we've DON'T CAN'T they'RE",
  "1234567890 3.14159 1,000,000 0x7fffffff 2026-11-30T12:00:00Z",
  "   leading spaces and trailing   \n\n\n  \t\tmixed\r\n\r\nwindows lines\r\n",
  'function f(x) {\n  return x * 2; // double\n}\n\nconst o = { "a": [1, 2, 3] };\n',
  "<|endoftext|> and <|endofprompt|> are plain text here, <|im_start|>system",
  "日本語のテキストと中文的句子，还有한국어 문장。",
  "这是一个很长的中文段落没有空格这是一个很长的中文段落没有空格这是一个很长的中文段落",
  "مرحبا بالعالم، هذا نص عربي. नमस्ते दुनिया, यह हिंदी पाठ है।",
  "Zalgo: Z̴̡̛a̷͇l̶̨g̸̝o̵͖ and e\u0301 vs é, ﬁ ligature, ＦＵＬＬＷＩＤＴＨ",
  "Emoji 😀🎉👩‍👩‍👧‍👦🏳️‍🌈 flags 🇫🇷🇯🇵 and ZWJ",
  "lone \uD800 high, lone \uDC00 low, pair \uD83D\uDE00, reversed \uDE00\uD83D",
  "=".repeat(63),
  "=".repeat(64),
  "=".repeat(65),
  "-".repeat(200),
  "!?".repeat(150),
  "😀".repeat(40),
  "长".repeat(21),
  "长".repeat(22),
  "中文测试文本".repeat(40),
  `${" ".repeat(100)}x`,
  "\n".repeat(70),
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
];

/** Code point ranges the random strings draw from: ASCII-heavy with every script class the regex cares about. */
const RANGES: readonly (readonly [number, number, number])[] = [
  // [from, to, weight]
  [0x20, 0x7e, 40],
  [0x09, 0x0d, 4],
  [0xa0, 0x24f, 6],
  [0x300, 0x36f, 2],
  [0x370, 0x3ff, 2],
  [0x400, 0x4ff, 3],
  [0x600, 0x6ff, 2],
  [0x900, 0x97f, 2],
  [0x3040, 0x30ff, 3],
  [0x4e00, 0x9fff, 5],
  [0xac00, 0xd7a3, 2],
  [0x2000, 0x206f, 2],
  [0xff00, 0xffef, 1],
  [0x1f300, 0x1faff, 3],
];
const WEIGHT = RANGES.reduce((s, r) => s + r[2], 0);

function randomCodePoint(rand: () => number): number {
  let x = rand() * WEIGHT;
  for (const [from, to, w] of RANGES) {
    if (x < w) return from + Math.floor(rand() * (to - from + 1));
    x -= w;
  }
  return 0x20;
}

/** `count` random strings of up to `maxLen` code points each. */
export function randomUnicodeStrings(seed: number, count: number, maxLen: number): string[] {
  const rand = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(rand() * maxLen);
    let s = "";
    for (let j = 0; j < n; j++) s += String.fromCodePoint(randomCodePoint(rand));
    out.push(s);
  }
  return out;
}

const WORDS =
  "the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part".split(
    " ",
  );

/** English-like prose of about `words` words, with capitals, punctuation and digits. */
export function prose(seed: number, words: number): string {
  const rand = seededRandom(seed);
  const parts: string[] = [];
  for (let i = 0; i < words; i++) {
    let w = WORDS[Math.floor(rand() * WORDS.length)]!;
    const r = rand();
    if (r < 0.06) w = w[0]!.toUpperCase() + w.slice(1);
    else if (r < 0.08) w = String(Math.floor(rand() * 100000));
    parts.push(w);
    const p = rand();
    if (p < 0.07) parts.push(".\n");
    else if (p < 0.12) parts.push(", ");
    else parts.push(" ");
  }
  return parts.join("");
}

/** The whole corpus: fixed edge cases, prose, and seeded random Unicode. */
export function tokenizerCorpus(): string[] {
  return [...FIXED, prose(1, 400), prose(2, 50), ...randomUnicodeStrings(42, 200, 120)];
}
