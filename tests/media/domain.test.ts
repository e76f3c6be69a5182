import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkedContentType, checkedName, keyFrom, KEY_PATTERN } from "../../services/media/domain/files.js";
import { dispositionOf, noneMatch, runsInBrowser } from "../../services/kit/blobs/labels.js";
import { rangeOf } from "../../services/kit/blobs/ranges.js";

describe("byte ranges", () => {
  it("reads one range of bytes, and ignores what is not one", () => {
    expect(rangeOf(null, 100)).toEqual({ kind: "whole" });
    expect(rangeOf("bytes=0-9", 100)).toEqual({ kind: "part", start: 0, end: 9 });
    expect(rangeOf("bytes=90-", 100)).toEqual({ kind: "part", start: 90, end: 99 });
    expect(rangeOf("bytes=90-500", 100)).toEqual({ kind: "part", start: 90, end: 99 });
    expect(rangeOf("bytes=-10", 100)).toEqual({ kind: "part", start: 90, end: 99 });
    expect(rangeOf("bytes=-500", 100)).toEqual({ kind: "part", start: 0, end: 99 });
    expect(rangeOf("bytes=100-", 100)).toEqual({ kind: "unsatisfiable" });
    expect(rangeOf("bytes=-0", 100)).toEqual({ kind: "unsatisfiable" });
    expect(rangeOf("bytes=0-", 0)).toEqual({ kind: "unsatisfiable" });
    for (const ignored of ["bytes=5-1", "bytes=0-1,5-6", "items=0-1", "bytes=-", "bytes=a-b"])
      expect(rangeOf(ignored, 100), ignored).toEqual({ kind: "whole" });
  });

  it("reads the header as RFC 9110 writes it: unit in any case, spaces, the one satisfiable range of several", () => {
    expect(rangeOf("Bytes=0-9", 100)).toEqual({ kind: "part", start: 0, end: 9 });
    expect(rangeOf("bytes= 10-19, ", 100)).toEqual({ kind: "part", start: 10, end: 19 });
    expect(rangeOf("bytes=0-1,200-300", 100)).toEqual({ kind: "part", start: 0, end: 1 });
    expect(rangeOf("bytes=200-300,400-", 100)).toEqual({ kind: "unsatisfiable" });
  });

  it("never answers a part outside the object", () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(20_000), fc.nat(20_000), (size, a, b) => {
        for (const header of [`bytes=${a}-${b}`, `bytes=${a}-`, `bytes=-${a}`]) {
          const range = rangeOf(header, size);
          if (range.kind === "part") {
            expect(range.start).toBeGreaterThanOrEqual(0);
            expect(range.end).toBeLessThan(size);
            expect(range.start).toBeLessThanOrEqual(range.end);
          }
        }
      }),
    );
  });
});

describe("file objects", () => {
  it("makes keys of 144 random bits in the key shape", () => {
    const key = keyFrom(new Uint8Array(18).fill(255));
    expect(key).toMatch(KEY_PATTERN);
    expect(() => keyFrom(new Uint8Array(16))).toThrow();
    expect(keyFrom(new Uint8Array(18).fill(0xf8))).toMatch(/^-/);
  });

  it("refuses an empty name (the contract's rules hold the others), and keeps names as sent", () => {
    expect(() => checkedName("")).toThrow();
    for (const good of ["photo.png", "..hidden", "café ☕.txt", "x".repeat(255)]) expect(checkedName(good)).toBe(good);
  });

  it("reads media types, defaulting to octet-stream", () => {
    expect(checkedContentType("")).toBe("application/octet-stream");
    expect(checkedContentType("Image/PNG")).toBe("image/png");
    expect(checkedContentType(" text/plain;charset=utf-8 ")).toBe("text/plain; charset=utf-8");
  });

  it("serves what a browser would run as an attachment, the rest inline", () => {
    for (const type of [
      "text/html",
      "image/svg+xml",
      "application/xml",
      "text/xml",
      "application/atom+xml",
      "text/javascript",
    ])
      expect(runsInBrowser(type), type).toBe(true);
    for (const type of ["image/png", "text/plain", "application/pdf", "video/mp4"])
      expect(runsInBrowser(type), type).toBe(false);
    expect(dispositionOf('a"b.html', "text/html")).toBe(`attachment; filename="a_b.html"; filename*=UTF-8''a%22b.html`);
  });

  it("matches If-None-Match lists, weak tags and *", () => {
    expect(noneMatch('"x", W/"abc"', '"abc"')).toBe(true);
    expect(noneMatch("*", '"abc"')).toBe(true);
    expect(noneMatch('"abd"', '"abc"')).toBe(false);
    expect(noneMatch(null, '"abc"')).toBe(false);
  });
});
