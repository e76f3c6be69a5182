import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SearchIndexService } from "../../gen/pf/search/v1/search_pb.js";
import { usePlatform } from "../support/platform.js";
import { freshId } from "./support.js";

const t = usePlatform({ services: ["search"] });

const op = fc.record({
  writer: fc.integer({ min: 0, max: 3 }),
  revision: fc.integer({ min: 1, max: 6 }),
  deleted: fc.boolean(),
});

describe("revision order under concurrent writers", () => {
  it("random interleavings of writes and deletes from several writers end in the highest revision's state, deletion winning ties", async () => {
    const token = await t.token({ kind: "service", svc: "deals", caps: ["search.document.write"] });
    const index = t.client(SearchIndexService, token);
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 16 }), async (ops) => {
        const id = freshId("c");
        const write = (o: (typeof ops)[number]) =>
          index.writeDocuments({
            writes: [
              {
                type: "offer",
                id,
                revision: BigInt(o.revision),
                deleted: o.deleted,
                // The content is the revision's: two writers at one revision send the same document.
                document: { title: `revision ${o.revision}`, public: true, published: true },
              },
            ],
          });
        // Each writer sends its writes in order; the writers run at once.
        await Promise.all(
          [0, 1, 2, 3].map(async (writer) => {
            for (const o of ops.filter((each) => each.writer === writer)) await write(o);
          }),
        );
        const top = Math.max(...ops.map((o) => o.revision));
        const deleted = ops.some((o) => o.revision === top && o.deleted);
        const held = await t.http("GET", `/search/api/v1/owners/deals/documents/offer/${id}`, { token });
        expect(held.body.document).toMatchObject({ revision: String(top), deleted });
        if (!deleted) expect(held.body.document.document.title).toBe(`revision ${top}`);
        const read = await t.http("GET", `/search/api/v1/documents/deals/offer/${id}`);
        expect(read.status).toBe(deleted ? 404 : 200);
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  it("a batch answers each write in order: applied, stale or rejected", async () => {
    const token = await t.token({ kind: "service", svc: "deals", caps: ["search.document.write"] });
    const index = t.client(SearchIndexService, token);
    const [a, b] = [freshId("b"), freshId("b")];
    const doc = { title: "Batch", public: true, published: true };
    await index.writeDocuments({ writes: [{ type: "offer", id: a, revision: 5n, document: doc }] });
    const answer = await index.writeDocuments({
      writes: [
        { type: "offer", id: a, revision: 4n, document: doc },
        { type: "offer", id: b, revision: 1n, document: { ...doc, title: "" } },
        { type: "offer", id: freshId("b"), revision: 1n, deleted: true },
      ],
    });
    expect(answer.results.map((r) => [r.outcome, r.code, r.currentRevision])).toEqual([
      [2, "search.revision_stale", 5n],
      [3, "search.document_invalid", 0n],
      [1, "", 1n],
    ]);
    const tooMany = Array.from({ length: 501 }, (_, n) => ({
      type: "offer",
      id: `m${n}`,
      revision: 1n,
      deleted: true,
    }));
    await expect(index.writeDocuments({ writes: tooMany })).rejects.toThrow(/at most 500/);
    await expect(
      index.writeDocuments({
        writes: [
          { type: "offer", id: a, revision: 9n, deleted: true },
          { type: "offer", id: a, revision: 10n, deleted: true },
        ],
      }),
    ).rejects.toThrow(/at most once/);
  });
});
