/**
 * A redacted preview of a prefix's text, enough to recognise a system prompt
 * ("system You are a SQL assistant … schema below, write one"), never the
 * text itself: at most PREVIEW_WORDS words from each end, never more than a
 * quarter of the words from either (so at least half of any text is
 * elided, and a text of fewer than four words shows nothing), each word cut
 * to PREVIEW_WORD_CHARS characters, control characters dropped.
 */

export const PREVIEW_WORDS = 4;
export const PREVIEW_WORD_CHARS = 16;
const ELISION = "…";

function clip(word: string): string {
  return word.length > PREVIEW_WORD_CHARS ? `${word.slice(0, PREVIEW_WORD_CHARS - 1)}${ELISION}` : word;
}

export function redactedPreview(text: string): string {
  // Whitespace (newlines between a role and its content included) becomes single spaces.
  const words = text
    .replace(/\p{Cc}/gu, " ")
    .split(/\s+/u)
    .filter((w) => w !== "");
  const k = Math.min(PREVIEW_WORDS, Math.floor(words.length / 4));
  if (k === 0) return ELISION;
  return [...words.slice(0, k).map(clip), ELISION, ...words.slice(words.length - k).map(clip)].join(" ");
}
