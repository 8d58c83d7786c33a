/**
 * Bounding a pre-tokenization pattern, so that no regex match — no piece —
 * can be longer than a constant, whatever the text.
 *
 * tiktoken's patterns repeat character classes without limit
 * (`[\p{Ll}...]+`, `\s+(?!\S)`, `[^\s\p{L}\p{N}]+`): in a 15 MiB run of one
 * letter the first match is the whole run, so V8 scans it (and keeps a
 * backtracking frame per character: a long CJK run overflows the stack),
 * and byte-pair merging then works on all of it before the first token
 * exists. Rewriting every unbounded quantifier to a bounded one (`*` →
 * `{0,N}`, `+` → `{1,N}`, `{n,}` → `{n,N}`) caps what one match can scan.
 *
 * Text whose runs are all at most N code points long matches exactly as
 * before: a greedy `{0,N}` tries the same counts, in the same order, as `*`
 * whenever fewer than N characters are available. Longer runs are cut into
 * pieces of at most N: deterministic, and a function of the text up to the
 * piece's end only, so two texts with the same start still share their
 * leading pieces.
 *
 * `maxWidth` is an upper bound on how many code points one match attempt
 * can examine from its start (every alternative, lookarounds included): a
 * text cut at least that far past a piece's start yields the same piece.
 */

export interface BoundedPattern {
  /** The pattern with every unbounded quantifier bounded. */
  readonly source: string;
  /** Code points one match attempt can examine past its start position, at most. */
  readonly maxWidth: number;
}

class Parser {
  private i = 0;
  private out = "";

  constructor(
    private readonly src: string,
    private readonly maxRun: number,
  ) {}

  run(): BoundedPattern {
    const width = this.alternation();
    if (this.i < this.src.length) throw new SyntaxError(`unbalanced ')' at ${this.i} in ${this.src}`);
    return { source: this.out, maxWidth: width };
  }

  /** alternatives separated by `|`, up to `)` or the end; returns the widest. */
  private alternation(): number {
    let widest = this.sequence();
    while (this.src[this.i] === "|") {
      this.emit(1);
      widest = Math.max(widest, this.sequence());
    }
    return widest;
  }

  private sequence(): number {
    let width = 0;
    for (;;) {
      const c = this.src[this.i];
      if (c === undefined || c === "|" || c === ")") return width;
      const atom = this.atom();
      width += atom * this.quantifier();
    }
  }

  /** One atom; returns the code points it consumes (or examines, for a lookaround). */
  private atom(): number {
    const c = this.src[this.i]!;
    if (c === "(") {
      this.emit(1);
      // (?: (?= (?! (?<= (?<! (?<name>: copy the group's head as is.
      if (this.src[this.i] === "?") {
        const m = /^\?(?::|=|!|<=|<!|<[A-Za-z_$][\w$]*>)/.exec(this.src.slice(this.i));
        if (m === null) throw new SyntaxError(`unsupported group at ${this.i} in ${this.src}`);
        this.emit(m[0].length);
      }
      const inner = this.alternation();
      if (this.src[this.i] !== ")") throw new SyntaxError(`unclosed '(' in ${this.src}`);
      this.emit(1);
      return inner;
    }
    if (c === "[") {
      this.emit(1);
      while (this.src[this.i] !== "]") {
        if (this.i >= this.src.length) throw new SyntaxError(`unclosed '[' in ${this.src}`);
        if (this.src[this.i] === "\\") this.escape();
        else this.emit(1);
      }
      this.emit(1);
      return 1;
    }
    if (c === "\\") return this.escape();
    if (c === "^" || c === "$") {
      this.emit(1);
      return 0;
    }
    if (c === "*" || c === "+" || c === "?" || c === "{")
      throw new SyntaxError(`quantifier without an atom at ${this.i} in ${this.src}`);
    this.emit(1);
    return 1;
  }

  /** An escape: `\p{..}`, `\u{..}`, `\uXXXX`, `\xXX`, `\cX`, or one character. Returns its width. */
  private escape(): number {
    const next = this.src[this.i + 1];
    if (next === undefined) throw new SyntaxError(`trailing '\\' in ${this.src}`);
    if (next >= "1" && next <= "9") throw new SyntaxError(`backreferences are not supported: ${this.src}`);
    if ((next === "p" || next === "P" || next === "u") && this.src[this.i + 2] === "{") {
      const close = this.src.indexOf("}", this.i);
      if (close < 0) throw new SyntaxError(`unclosed '\\${next}{' in ${this.src}`);
      this.emit(close + 1 - this.i);
    } else if (next === "u") this.emit(6);
    else if (next === "x") this.emit(4);
    else if (next === "c") this.emit(3);
    else this.emit(2);
    return next === "b" || next === "B" ? 0 : 1;
  }

  /** The quantifier after an atom, bounded; returns its maximum count (1 without one). */
  private quantifier(): number {
    const c = this.src[this.i];
    let max = 1;
    if (c === "*" || c === "+") {
      this.i++;
      this.out += c === "*" ? `{0,${this.maxRun}}` : `{1,${this.maxRun}}`;
      max = this.maxRun;
    } else if (c === "?") {
      this.emit(1);
    } else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (m === null) throw new SyntaxError(`bad quantifier at ${this.i} in ${this.src}`);
      const lo = Number(m[1]);
      if (m[2] === undefined) max = lo;
      else if (m[3] === "") max = Math.max(lo, this.maxRun);
      else max = Number(m[3]);
      this.i += m[0].length;
      this.out += m[2] === undefined ? `{${lo}}` : `{${lo},${max}}`;
    } else {
      return 1;
    }
    if (this.src[this.i] === "?") this.emit(1); // lazy
    return max;
  }

  private emit(n: number): void {
    this.out += this.src.slice(this.i, this.i + n);
    this.i += n;
  }
}

/** `pattern` with every unbounded quantifier capped at `maxRun`, and how far one match can look. */
export function boundPattern(pattern: string, maxRun: number): BoundedPattern {
  if (!Number.isInteger(maxRun) || maxRun < 1)
    throw new RangeError(`maxRun must be a positive integer, got ${maxRun}`);
  return new Parser(pattern, maxRun).run();
}
