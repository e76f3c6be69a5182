import { describe, expect, it } from "vitest";
import { parseIfMatch } from "../../services/kit/revisions.js";

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
