import { describe, expect, it } from "vitest";
import { problemOf } from "../../services/kit/handler/problem.js";
import { checkRevision, parseIfMatch } from "../../services/kit/handler/revisions.js";

describe("If-Match", () => {
  it("is a revision, * for any existing record, or a weak tag that never matches", () => {
    expect(parseIfMatch(null)).toBeUndefined();
    expect(parseIfMatch('"7"')).toBe(7n);
    expect(parseIfMatch("7")).toBe(7n);
    // Strong comparison: a weak tag never matches; `*` matches any current record.
    expect(parseIfMatch('W/"7"')).toBe("never");
    expect(parseIfMatch("*")).toBe("any");
    expect(() => parseIfMatch("seven")).toThrow(/If-Match/);
  });
});

const codeOf = (work: () => void) => {
  try {
    work();
    return "ok";
  } catch (error) {
    return problemOf(error).code;
  }
};

describe("revision checks", () => {
  it.each([
    [3n, undefined, undefined, "ok"],
    [3n, 3n, undefined, "ok"],
    [3n, undefined, 3n, "ok"],
    [3n, undefined, "any", "ok"],
    [3n, 2n, undefined, "revision.conflict"],
    [3n, undefined, "never", "revision.conflict"],
    [3n, 3n, 2n, "request.invalid"],
    // A weak If-Match never matches, whatever the body expects.
    [3n, 3n, "never", "revision.conflict"],
    [3n, 3n, "any", "ok"],
  ] as const)("at %s, body %s, If-Match %s → %s", (current, body, header, code) =>
    expect(codeOf(() => checkRevision(current, body, header))).toBe(code),
  );
});
