/**
 * The shortest string a JSON Schema `pattern` matches, built from the pattern
 * itself for the regular expressions the contracts write (anchors, literals,
 * escapes, classes, groups, alternatives, quantifiers): each alternative's
 * first branch, each quantifier's least count, each class's first character.
 * Undefined when the pattern uses more (lookarounds, backreferences) or the
 * string built does not match after all: no example is better than a wrong one.
 */
export function patternSample(pattern: string): string | undefined {
  try {
    const parser = new Parser(pattern);
    const sample = parser.alternatives();
    if (!parser.done()) return undefined;
    return new RegExp(pattern, "u").test(sample) ? sample : undefined;
  } catch {
    return undefined;
  }
}

/** Characters tried, in order, for `.` and a negated class. */
const CANDIDATES = ["a", "0", "-", "_", "A"];

const ESCAPES: Record<string, string> = { d: "0", w: "a", s: " ", D: "a", W: "-", S: "a", n: "\n", t: "\t", r: "\r" };

class Parser {
  private at = 0;
  constructor(private readonly source: string) {}

  done(): boolean {
    return this.at === this.source.length;
  }

  /** `a|b|c` up to a closing parenthesis or the end: the first branch's sample. */
  alternatives(): string {
    const first = this.sequence();
    while (this.source[this.at] === "|") {
      this.at++;
      this.sequence();
    }
    return first;
  }

  private sequence(): string {
    let text = "";
    while (!this.done() && this.source[this.at] !== "|" && this.source[this.at] !== ")") {
      const atom = this.atom();
      text += atom.repeat(this.quantifier());
    }
    return text;
  }

  private atom(): string {
    const char = this.source[this.at++];
    switch (char) {
      case "^":
      case "$":
        return "";
      case ".":
        return CANDIDATES[0];
      case "\\":
        return this.escape();
      case "[":
        return this.characterClass();
      case "(": {
        if (this.source.startsWith("?:", this.at)) this.at += 2;
        else if (this.source[this.at] === "?") throw new Error("lookarounds and named groups are not sampled");
        const inner = this.alternatives();
        if (this.source[this.at++] !== ")") throw new Error("unclosed group");
        return inner;
      }
      default:
        if ("*+?{}".includes(char)) throw new Error(`a quantifier without an atom at ${this.at - 1}`);
        return char;
    }
  }

  private escape(): string {
    const char = this.source[this.at++];
    if (char === undefined) throw new Error("a trailing backslash");
    if (/[1-9bBk]/.test(char)) throw new Error("backreferences and boundaries are not sampled");
    return ESCAPES[char] ?? char;
  }

  /** `[a-z0-9_]`: its first character (or range start); `[^…]`: the first candidate the class matches. */
  private characterClass(): string {
    const start = this.at - 1;
    const negated = this.source[this.at] === "^";
    if (negated) this.at++;
    let first: string | undefined;
    while (this.source[this.at] !== "]") {
      if (this.done()) throw new Error("unclosed class");
      const char = this.source[this.at++];
      if (char !== "\\") first ??= char;
      else if (first === undefined) first = this.escape();
      else this.at++;
    }
    this.at++;
    if (!negated && first !== undefined) return first;
    const members = new RegExp(this.source.slice(start, this.at), "u");
    const pick = CANDIDATES.find((candidate) => members.test(candidate));
    if (pick === undefined) throw new Error("a negated class leaving out every candidate");
    return pick;
  }

  /** `?` `*` `+` `{n}` `{n,}` `{n,m}` (lazy or not): the least count. */
  private quantifier(): number {
    const char = this.source[this.at];
    let count = 1;
    if (char === "?" || char === "*") {
      count = 0;
      this.at++;
    } else if (char === "+") {
      this.at++;
    } else if (char === "{") {
      const match = /^\{(\d+)(,\d*)?\}/.exec(this.source.slice(this.at));
      if (!match) return 1;
      count = Number(match[1]);
      this.at += match[0].length;
    } else return 1;
    if (this.source[this.at] === "?") this.at++;
    return count;
  }
}
