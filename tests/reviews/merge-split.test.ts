import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { fresh, person, REVIEWS_ENV, reviewsKit, searchDocumentOf } from "./support.js";

/**
 * Hardest rule 1 as a property: merges then splits (in any valid order) are
 * the identity on every read: entity pages (history aside: the audit records
 * both), aggregates, signals and resolution by each alias.
 */
const t = usePlatform({ services: ["reviews", "ai"], env: REVIEWS_ENV });
const { call, asAi, entity, signal, runId } = reviewsKit(t);
const searchDocument = searchDocumentOf(t);
const EDITOR = "usr_editor1";

/** Every read of the entities, history left out. */
async function reads(ids: string[], skus: string[]) {
  const out: unknown[] = [];
  for (const id of ids) {
    const page = (await call("GET", `/entities/${id}`, EDITOR)).body.page;
    delete page.history;
    out.push(page);
    out.push((await call("GET", `/entities/${id}/aggregate`, EDITOR)).body);
    out.push((await call("GET", `/entities/${id}/signals`, EDITOR)).body);
  }
  for (const sku of skus) out.push((await call("GET", `/entities?sku=${sku}`, EDITOR)).body);
  return out;
}

describe("merge then split", () => {
  it("is the identity on every read, over random merge sequences", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(3), fc.nat(3)), { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 4, maxLength: 8 }),
        async (pairs, scores) => {
          const skus = [0, 1, 2, 3].map(() => fresh("SKU"));
          const ids = [];
          for (const sku of skus) ids.push((await entity({ aliases: [{ kind: "sku", value: sku }] })).id);
          for (const [i, score] of scores.entries()) await signal(ids[i % 4], score);
          await call("POST", `/entities/${ids[0]}/exclusions`, EDITOR, { source: "spam", reason: "spam farm" });
          const before = await reads(ids, skus);
          const merged: string[] = [];
          for (const [from, into] of pairs) {
            const answer = await call("POST", `/entities/${ids[from]}/merge`, EDITOR, {
              into: ids[into],
              reason: "dupe",
            });
            if (answer.status === 200) merged.push(ids[from]);
            else expect(answer.status).toBe(409);
          }
          for (const id of merged.reverse()) {
            expect((await call("POST", `/entities/${id}/split`, EDITOR, { reason: "not a dupe" })).status).toBe(200);
          }
          expect(await reads(ids, skus)).toEqual(before);
        },
      ),
      { numRuns: 6 },
    );
  });

  it("split in another order than the merges restores the same", async () => {
    const [a, b, c] = [await entity(), await entity(), await entity()];
    await signal(a.id, 1);
    await signal(b.id, 4);
    await signal(c.id, 5);
    const before = await reads([a.id, b.id, c.id], []);
    await call("POST", `/entities/${a.id}/merge`, EDITOR, { into: b.id, reason: "x" });
    await call("POST", `/entities/${b.id}/merge`, EDITOR, { into: c.id, reason: "y" });
    const root = (await call("GET", `/entities/${c.id}/aggregate`, EDITOR)).body.aggregate;
    expect(root.count).toBe(3);
    expect(root.entity_ids.sort()).toEqual([a.id, b.id, c.id].sort());
    await call("POST", `/entities/${a.id}/split`, EDITOR, { reason: "x" });
    await call("POST", `/entities/${b.id}/split`, EDITOR, { reason: "y" });
    expect(await reads([a.id, b.id, c.id], [])).toEqual(before);
  });

  it("flags summaries above the split citing split-off signals, with a pending revision without them", async () => {
    // a into b, b into c: c's summary cites signals of all three.
    const [a, b, c] = [await entity(), await entity(), await entity()];
    const [sa, sb, sc] = [await signal(a.id, 1), await signal(b.id, 4), await signal(c.id, 5)];
    await call("POST", `/entities/${a.id}/merge`, EDITOR, { into: b.id, reason: "x" });
    await call("POST", `/entities/${b.id}/merge`, EDITOR, { into: c.id, reason: "y" });
    const only = fresh("Only about a ");
    const proposal = {
      overview: "A kettle",
      pros: [
        { text: "Sturdy", citations: [sa.id, sc.id] },
        { text: only, citations: [sa.id] },
      ],
      cons: [{ text: "Pricey", citations: [sb.id] }],
      workflow: "reviews.summarize_entity",
      run_id: await runId(),
    };
    for (let n = 1; n <= 3; n++) expect((await asAi(`/entities/${c.id}/summary/proposals`, proposal)).status).toBe(201);
    const publish = (body: unknown) => call("POST", `/entities/${c.id}/summary/publish`, EDITOR, body);
    await publish({ approve: { revision: 1 } });
    await publish({ publish: { revision: 1 } });
    await publish({ reject: { revision: 2 } });

    const split = await call("POST", `/entities/${a.id}/split`, EDITOR, { reason: "different" });
    expect(split.status).toBe(200);
    const [flagged, proposed, pending, ...rest] = split.body.flagged;
    expect(rest).toEqual([]);
    expect(flagged).toMatchObject({ entity_id: c.id, revision: 1, state: "published" });
    expect(flagged.flag).toContain(a.id);
    expect(proposed).toMatchObject({ entity_id: c.id, revision: 3, state: "proposed", flag: flagged.flag });
    expect(pending).toMatchObject({
      entity_id: c.id,
      revision: 4,
      state: "proposed",
      overview: "A kettle",
      pros: [{ text: "Sturdy", citations: [sc.id] }],
      cons: [{ text: "Pricey", citations: [sb.id] }],
      authorship: { system: { service: "svc:reviews" } },
    });
    // The rejected revision is not flagged; the published one stays until an editor acts.
    const revisions = (await call("GET", `/entities/${c.id}/summary`, EDITOR)).body.summary.revisions;
    expect(revisions.find((r: { revision: number }) => r.revision === 2).flag).toBe("");
    const reader = person("reader");
    const page = (await call("GET", `/entities/${c.id}`, reader)).body.page;
    expect(page.summary).toMatchObject({ revision: 1, state: "published", flag: flagged.flag });
    expect(page.summary_revisions.map((r: { revision: number }) => r.revision)).toEqual([1]);
    expect((await searchDocument(c.id))?.body).toContain(only);

    // Flagged revisions cite signals no longer of c: neither approved nor published again.
    const stale = await publish({ publish: { revision: 1 } });
    expect(stale.body.revision.state).toBe("published");
    const flaggedProposal = await publish({ approve: { revision: 3 } });
    expect(flaggedProposal.body).toMatchObject({ status: 422, code: "summary.citation_invalid", signal_id: sa.id });
    await publish({ approve: { revision: 4 } });
    expect((await publish({ publish: { revision: 4 } })).body.published.revision).toBe(4);
    expect((await searchDocument(c.id))?.body).not.toContain(only);
    const again = await publish({ publish: { revision: 1 } });
    expect(again.body).toMatchObject({ status: 422, code: "summary.citation_invalid", signal_id: sa.id });
  });
});
