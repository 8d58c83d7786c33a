/**
 * How the Worker counts text it does not tokenize, shared by the keying (request-keys.ts) and the claim of its
 * runs of one character (run-excess.ts), which must agree on both figures.
 */

/** Characters per token for text that was not tokenized (past the cap). */
export const CHARS_PER_TOKEN_ESTIMATE = 4;

/**
 * Characters of text keyed per token of `prefixTokens`, at most. o200k
 * averages ~4 characters a token on English prose and code, so ordinary
 * prompts reach the token cap long before this; text made of long runs
 * (spaces, rulers, one repeated letter: up to ~128 a token) stops here, at
 * a cost of the same order as an ordinary prompt's.
 */
export const MAX_KEYED_CHARS_PER_TOKEN = 8;
