import { describe, expect, it } from "vitest";
import { idPattern, newId } from "../../services/kit/handler/ids.js";
import { decodeCursor, decodeTextCursor, encodeCursor, page, pageLimit } from "../../services/kit/handler/paging.js";

describe("prefixed time-sortable ids", () => {
  it("carry the prefix and a 26-character ULID body", () => {
    expect(newId("off")).toMatch(/^off_[0-9a-hjkmnp-tv-z]{26}$/);
  });

  it("are what the input guard admits for their prefix (id_prefix), and another prefix's are not", () => {
    for (const prefix of ["pln", "co", "tevt"]) expect(newId(prefix)).toMatch(idPattern(prefix));
    expect(newId("prk")).not.toMatch(idPattern("pln"));
    expect("usr_a1").toMatch(idPattern("usr", "gst"));
    expect("gst_a1").toMatch(idPattern("usr", "gst"));
  });

  it("sort by creation time, also within one millisecond", () => {
    const ids = Array.from({ length: 1000 }, (_, i) => newId("tip", 1_700_000_000_000 + Math.floor(i / 100)));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
  });
});

describe("cursor paging", () => {
  it("defaults to 50 when unset and refuses limits outside 1–200, 0 among them", () => {
    expect(pageLimit(undefined)).toBe(50);
    expect(pageLimit(1)).toBe(1);
    expect(pageLimit(200)).toBe(200);
    for (const limit of [0, -1, 201, 1.5]) expect(() => pageLimit(limit), String(limit)).toThrow(/limit/);
  });

  it("cuts a page of limit + 1 rows and makes an opaque cursor from the last row kept", () => {
    const rows = [{ id: "a" }, { id: "b" }, { id: "c" }];
    const { items, nextCursor } = page(rows, 2, (row) => [row.id]);
    expect(items).toEqual([{ id: "a" }, { id: "b" }]);
    expect(decodeCursor(nextCursor)).toEqual(["b"]);
    expect(page(rows, 3, (row) => [row.id]).nextCursor).toBe("");
  });

  it("refuses a cursor it did not issue", () => {
    expect(decodeCursor(encodeCursor([1, "x"]))).toEqual([1, "x"]);
    expect(decodeCursor("")).toBeUndefined();
    expect(() => decodeCursor("not-a-cursor")).toThrow(/cursor/);
  });
});

describe("text cursors", () => {
  it("answer the keys a page made from strings, and 400 cursor for any other shape", () => {
    expect(decodeTextCursor("", 2)).toBeUndefined();
    expect(decodeTextCursor(encodeCursor(["2026-01-01T00:00:00.000Z", "int_1"]), 2)).toEqual([
      "2026-01-01T00:00:00.000Z",
      "int_1",
    ]);
    for (const position of [[{}, "x"], ["x"], ["x", 1], ["x", ""], []]) {
      expect(() => decodeTextCursor(encodeCursor(position), 2), JSON.stringify(position)).toThrow(
        "cursor is not one this service issued",
      );
    }
  });
});
