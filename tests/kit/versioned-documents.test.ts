import type { HandlerContext } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { BlogService } from "../../gen/pf/blog/v1/blogs_pb.js";
import { answerVersioned } from "../../services/kit/feeds/answer.js";

/** A call of a route declaring 200 and 304 (a public feed), with the request headers given. */
const callWith = (headers: Record<string, string> = {}) =>
  ({
    method: BlogService.method.getPublicFeed,
    requestHeader: new Headers(headers),
    responseHeader: new Headers(),
  }) as unknown as HandlerContext;

let versions = 0;
/** A document of a version no other test uses, counting how often it is made. */
function document() {
  const made = { count: 0 };
  const version = `test-${process.pid}-${Date.now()}-${versions++}`;
  const make = async () => {
    made.count++;
    await new Promise((resolve) => setImmediate(resolve));
    return `<rss>${version}</rss>`;
  };
  return { made, doc: { contentType: "application/rss+xml; charset=utf-8", maxAgeSeconds: 60, version, make } };
}

describe("answerVersioned (issue 24: the ETag before the work)", () => {
  it("answers 304 to a reader naming the version's ETag without making the document", async () => {
    const { made, doc } = document();
    // Nothing of this version was ever made: the ETag comes from the version alone.
    const unseen = callWith({ "if-none-match": "*" });
    const notModified = await answerVersioned(unseen, { ...doc, make: () => Promise.reject(new Error("made")) });
    expect(unseen.responseHeader.get("pf-http-status")).toBe("304");
    expect(notModified.data).toHaveLength(0);
    const etag = unseen.responseHeader.get("etag")!;
    expect(etag).toMatch(/^"[\w-]{32}"$/);
    expect(unseen.responseHeader.get("cache-control")).toBe("public, max-age=60");

    const first = callWith();
    const answer = await answerVersioned(first, doc);
    expect(new TextDecoder().decode(answer.data)).toBe(`<rss>${doc.version}</rss>`);
    expect(first.responseHeader.get("etag")).toBe(etag);
    expect(made.count).toBe(1);
    const again = callWith({ "if-none-match": `W/${etag}` });
    expect((await answerVersioned(again, doc)).data).toHaveLength(0);
    expect(again.responseHeader.get("pf-http-status")).toBe("304");
  });

  it("makes one version once for twenty readers at once and for readers after them", async () => {
    const { made, doc } = document();
    const answers = await Promise.all(Array.from({ length: 20 }, () => answerVersioned(callWith(), doc)));
    expect(new Set(answers.map((answer) => new TextDecoder().decode(answer.data))).size).toBe(1);
    await answerVersioned(callWith(), doc);
    expect(made.count).toBe(1);
    // Another version (a post changed) is another ETag and is made anew.
    await answerVersioned(callWith(), { ...doc, version: `${doc.version}+1` });
    expect(made.count).toBe(2);
  });
});
