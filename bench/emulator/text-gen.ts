/**
 * Deterministic output text: one pseudo-word per token, chosen by a hash of
 * (prompt, seed, choice, position), so the same request always yields the
 * same answer and different prompts yield different ones. Words are common
 * English words that o200k encodes as one token each (with their leading
 * space), so "one token ≈ one word" holds for whoever re-tokenizes the text.
 */

const WORDS = (
  "the of and to in is was for on that with as by at from his her they this had not are but " +
  "have one all were when there can an which their said if will each about how up out them then " +
  "she many some so these would other into has more two like him time see no could make than been " +
  "its who now people my made over did down only way find use may water long little very after " +
  "words called just where most know get through back much before go good new write our used me " +
  "man too any day same right look think also around another came come work three word must because " +
  "does part even place well such here take why things help put years different away again off went " +
  "old number great tell men say small every found still between name should home big give air line " +
  "set own under read last never us left end along while might next sound below saw something thought " +
  "both few those always looked show large often together asked house world going want school important " +
  "until form food keep children feet land side without boy once animals life enough took sometimes four " +
  "head above kind began almost live page got earth need far hand high year mother light parts country father"
).split(" ");

/** FNV-1a over a string, 32-bit. */
export function hashString(s: string, h = 0x811c9dc5): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function mix(a: number, b: number): number {
  let h = Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export interface GeneratedText {
  /** Text of each generated token, in order; the last may be cut short by a stop string. */
  readonly pieces: readonly string[];
  readonly text: string;
  readonly finishReason: "stop" | "length";
}

/**
 * Up to `maxTokens` pseudo-words. If a stop string occurs, the text ends just
 * before it (the stop string is not returned, as in OpenAI/vLLM), the token
 * that completed it is the last one generated, and finish_reason is "stop".
 * Otherwise finish_reason is `end`: "length" for a max_tokens cap, "stop"
 * for the model's own EOS.
 */
export function generateText(
  promptHash: number,
  seed: number,
  choice: number,
  maxTokens: number,
  stop: readonly string[],
  end: "length" | "stop" = "length",
): GeneratedText {
  const base = mix(mix(promptHash, seed), choice + 1);
  const pieces: string[] = new Array(maxTokens);
  let text = "";
  for (let i = 0; i < maxTokens; i++) {
    const w = WORDS[mix(base, i) % WORDS.length]!;
    const piece = i === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : ` ${w}`;
    pieces[i] = piece;
    const before = text.length;
    text += piece;
    for (const s of stop) {
      if (s === "") continue;
      // Only occurrences that end inside this piece are new.
      const at = text.indexOf(s, Math.max(0, before - s.length + 1));
      if (at >= 0) {
        const cut = text.slice(0, at);
        return { pieces: clipTo(pieces.slice(0, i + 1), cut), text: cut, finishReason: "stop" };
      }
    }
  }
  return { pieces, text, finishReason: end };
}

/** Clips the pieces so they concatenate to `text`, a prefix of their concatenation (a stop string may begin in an earlier piece). */
function clipTo(pieces: string[], text: string): string[] {
  let pos = 0;
  return pieces.map((p) => {
    const clipped = p.slice(0, Math.max(0, text.length - pos));
    pos += clipped.length;
    return clipped;
  });
}
