import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { fresh, person, REVIEWS_ENV, reviewsKit } from "./support.js";

/** The five hardest rules of reviews (analysis A.3) through the gateway. */
const t = usePlatform({ services: ["reviews", "ai"], env: REVIEWS_ENV });
const { call, asAi, entity, signal, runId } = reviewsKit(t);
const EDITOR = "usr_editor1";
/** AI output's claim: a real run of the AI service's stub provider (the route verifies it). */
const WORKFLOW = { workflow: "reviews.summarize_entity", run_id: "", stub_provider: true };
beforeAll(async () => {
  WORKFLOW.run_id = await runId();
});

describe("rule 2: resolution is deterministic", () => {
  it("an identifier resolves to exactly one entity, normalised alike at write and resolve", async () => {
    const sku = fresh("SKU-");
    const a = await entity({
      aliases: [
        { kind: "sku", value: sku.toLowerCase() },
        { kind: "gtin", value: "4006381333931" },
      ],
    });
    const found = await call(
      "GET",
      `/entities?sku=${encodeURIComponent(" " + sku.toUpperCase().replace("-", " ") + " ")}`,
      EDITOR,
    );
    expect(found.status).toBe(200);
    expect(found.body.resolution).toMatchObject({ outcome: "match", entity: { id: a.id } });
    const gtin = await call("GET", "/entities?gtin=04006381333931", EDITOR);
    expect(gtin.body.resolution.entity.id).toBe(a.id);
    const bad = await call("GET", "/entities?gtin=4006381333932", EDITOR);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "request.invalid", field: "gtin" });
  });

  it("a name alone yields candidates, never a match, even with one candidate", async () => {
    const name = fresh("Lonely Widget ");
    const a = await entity({ name });
    const answer = await call("GET", `/entities?q=${encodeURIComponent(name.toUpperCase())}`, EDITOR);
    expect(answer.body.resolution.outcome).toBe("candidates");
    expect(answer.body.resolution.entity).toBeUndefined();
    expect(answer.body.resolution.candidates.map((c: { id: string }) => c.id)).toEqual([a.id]);
  });

  it("identifiers naming two entities report a conflict and choose none; an identifier is never re-pointed", async () => {
    const url = `https://shop.example/${fresh("p")}`;
    const mpn = fresh("MPN");
    const a = await entity({ aliases: [{ kind: "url", value: url }] });
    const b = await entity({ aliases: [{ kind: "mpn", value: mpn }] });
    const answer = await call("GET", `/entities?url=${encodeURIComponent(url + "/#top")}&mpn=${mpn}`, EDITOR);
    expect(answer.body.resolution.outcome).toBe("conflict");
    expect(answer.body.resolution.entity).toBeUndefined();
    expect(answer.body.resolution.candidates.map((c: { id: string }) => c.id).sort()).toEqual([a.id, b.id].sort());
    const taken = await call("POST", `/entities/${b.id}/aliases`, EDITOR, {
      alias_kind: "url",
      alias: url.replace("https://shop", "HTTPS://WWW.SHOP") + "/?utm_source=x",
    });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ code: "alias.conflict", entity_id: a.id });
  });
});

describe("rule 1: merge and split are exact", () => {
  it("merge is by an editor person, never a service alone nor a person off the list", async () => {
    const a = await entity();
    const b = await entity();
    const alone = await call("POST", `/entities/${a.id}/merge`, undefined, { into: b.id, reason: "dupe" });
    expect(alone.status).toBe(403);
    expect(alone.body.code).toBe("auth.person_required");
    const stranger = await call("POST", `/entities/${a.id}/merge`, person(), { into: b.id, reason: "dupe" });
    expect(stranger.status).toBe(403);
    expect(stranger.body.code).toBe("auth.editor_required");
    const noReason = await call("POST", `/entities/${a.id}/merge`, EDITOR, { into: b.id });
    expect(noReason.body).toMatchObject({ status: 400, field: "reason" });
  });

  it("rewrites nothing, records who, when and why, covers both in the target aggregate; split restores it", async () => {
    const a = await entity({ aliases: [{ kind: "sku", value: fresh("A") }] });
    const b = await entity();
    const sa = await signal(a.id, 5);
    const sb = await signal(b.id, 3);
    const merged = await call("POST", `/entities/${a.id}/merge`, EDITOR, { into: b.id, reason: "same product" });
    expect(merged.status).toBe(200);
    expect(merged.body.entity).toMatchObject({
      state: "merged",
      merged_into: { into: b.id, merged_by: EDITOR, reason: "same product" },
    });
    expect(merged.body.entity.aliases).toHaveLength(1);
    expect(merged.body.aggregate).toMatchObject({ entity_id: b.id, count: 2, score: "80.00" });
    const signals = (await call("GET", `/entities/${b.id}/signals`, EDITOR)).body.signals.signals;
    expect(Object.fromEntries(signals.map((s: { id: string; entity_id: string }) => [s.id, s.entity_id]))).toEqual({
      [sa.id]: a.id,
      [sb.id]: b.id,
    });
    const again = await call("POST", `/entities/${b.id}/merge`, EDITOR, { into: a.id, reason: "loop" });
    expect(again.body.code).toBe("entity.merged");
    const split = await call("POST", `/entities/${a.id}/split`, EDITOR, { reason: "different sizes" });
    expect(split.status).toBe(200);
    expect(split.body.entity.state).toBe("active");
    expect(split.body.aggregate).toMatchObject({ count: 1, score: "100.00" });
    expect(split.body.former_target_aggregate).toMatchObject({ count: 1, score: "60.00" });
    const notMerged = await call("POST", `/entities/${a.id}/split`, EDITOR, { reason: "again" });
    expect(notMerged.body.code).toBe("entity.not_merged");
  });
});

describe("rule 4: aggregates show their provenance", () => {
  it("lists the exact inputs and every exclusion with its reason, recomputed after an exclusion", async () => {
    const a = await entity();
    const s1 = await signal(a.id, 4, { source_key: "fair" });
    const s2 = await signal(a.id, 1, { source_key: "paid" });
    const s3 = await signal(a.id, 2, { source_key: "fair" });
    const before = (await call("GET", `/entities/${a.id}/aggregate`, EDITOR)).body.aggregate;
    expect(before).toMatchObject({ count: 3, score: "46.67" });
    await call("POST", `/entities/${a.id}/exclusions`, EDITOR, { source: "paid", reason: "paid placement" });
    const ex = await call("POST", `/entities/${a.id}/exclusions`, EDITOR, {
      signal_id: s3.id,
      reason: "duplicate review",
    });
    expect(ex.status).toBe(201);
    const after = (await call("GET", `/entities/${a.id}/aggregate`, EDITOR)).body.aggregate;
    expect(after.score).toBe("80.00");
    expect(after.inputs.map((i: { signal_id: string }) => i.signal_id)).toEqual([s1.id]);
    expect(after.excluded.map((e: { signal_id: string; reason: string }) => [e.signal_id, e.reason]).sort()).toEqual(
      [
        [s2.id, "paid placement"],
        [s3.id, "duplicate review"],
      ].sort(),
    );
  });
});

describe("rule 3: summary proposals", () => {
  it("cite signals of this entity, carry AI authorship, refuse ratings, never publish, stay off the page until approved", async () => {
    const a = await entity();
    const other = await entity();
    const s = await signal(a.id, 4);
    const foreign = await signal(other.id, 2);
    const body = {
      pros: [{ text: "Sturdy hinges", citations: [s.id] }],
      cons: [{ text: "Heavy", citations: [s.id] }],
      ...WORKFLOW,
    };
    const wrong = await asAi(`/entities/${a.id}/summary/proposals`, {
      ...body,
      cons: [{ text: "Heavy", citations: [foreign.id] }],
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.code).toBe("summary.citation_invalid");
    const uncited = await asAi(`/entities/${a.id}/summary/proposals`, {
      ...body,
      cons: [{ text: "Heavy", citations: [] }],
    });
    expect(uncited.body.code).toBe("summary.citation_invalid");
    for (const text of ["Great, 4/5", "4.5 out of 5 overall", "★★★★☆", "Five stars", "Rated highly"]) {
      const rated = await asAi(`/entities/${a.id}/summary/proposals`, { ...body, overview: text });
      expect(rated.status, text).toBe(422);
      expect(rated.body.code).toBe("summary.rating_refused");
    }
    const field = await asAi(`/entities/${a.id}/summary/proposals`, { ...body, rating: 4 });
    expect(field.status).toBe(400);
    const person = await call("POST", `/entities/${a.id}/summary/proposals`, EDITOR, body);
    expect(person.status).toBe(403);
    const proposed = await asAi(`/entities/${a.id}/summary/proposals`, body);
    expect(proposed.status).toBe(201);
    expect(proposed.body.revision).toMatchObject({
      revision: 1,
      state: "proposed",
      authorship: { ai: { workflow: "reviews.summarize_entity", run_id: WORKFLOW.run_id, stub_provider: true } },
    });
    const page = (await call("GET", `/entities/${a.id}`, person_())).body.page;
    expect(page.summary).toBeUndefined();
    expect(page.summary_revisions).toEqual([]);
    expect((await call("GET", `/entities/${a.id}/summary/revisions/1`, person_())).status).toBe(404);
    const early = await call("POST", `/entities/${a.id}/summary/publish`, EDITOR, { publish: { revision: 1 } });
    expect(early.body.code).toBe("summary.not_approved");
    const byService = await call("POST", `/entities/${a.id}/summary/publish`, undefined, { approve: { revision: 1 } });
    expect(byService.status).toBe(403);
    expect((await call("POST", `/entities/${a.id}/summary/publish`, EDITOR, { approve: { revision: 1 } })).status).toBe(
      200,
    );
    const published = await call("POST", `/entities/${a.id}/summary/publish`, EDITOR, { publish: { revision: 1 } });
    expect(published.body.published.revision).toBe(1);
    const shown = (await call("GET", `/entities/${a.id}`, person_())).body.page;
    expect(shown.summary).toMatchObject({ revision: 1, state: "published", review: { approver: EDITOR } });
  });
});

describe("rule 5: corrections are never published", () => {
  it("only editors read the queue; the evidence URL is optional and never fetched", async () => {
    const a = await entity();
    const submitter = person();
    // A closed port on loopback: a fetch would fail; the submit never tries.
    const submitted = await call("POST", `/entities/${a.id}/corrections`, submitter, {
      text: "Wrong **brand**",
      evidence_url: "http://127.0.0.1:9/evidence",
    });
    expect(submitted.status).toBe(201);
    expect(submitted.body.correction).toMatchObject({ state: "open", submitted_by: submitter });
    const plain = await call("POST", `/entities/${a.id}/corrections`, submitter, { text: "No evidence" });
    expect(plain.status).toBe(201);
    const badUrl = await call("POST", `/entities/${a.id}/corrections`, submitter, {
      text: "x",
      evidence_url: "ftp://x",
    });
    expect(badUrl.body).toMatchObject({ status: 400, field: "evidence_url" });
    const own = await call("GET", "/corrections", submitter);
    expect(own.status).toBe(403);
    expect(own.body.code).toBe("auth.editor_required");
    expect((await call("GET", `/corrections/${submitted.body.correction.id}`, submitter)).status).toBe(403);
    const queue = await call("GET", "/corrections?limit=200", EDITOR);
    expect(queue.body.corrections.corrections.map((c: { id: string }) => c.id)).toContain(submitted.body.correction.id);
    const page = await call("GET", `/entities/${a.id}`, submitter);
    expect(JSON.stringify(page.body)).not.toContain("Wrong");
    const triaged = await call("PATCH", `/corrections/${submitted.body.correction.id}`, EDITOR, {
      state: "accepted",
      editor_note: "fixed",
    });
    expect(triaged.body.correction).toMatchObject({ state: "accepted", triaged_by: EDITOR });
  });
});

describe("slugs", () => {
  it("an old slug answers 301 to the current one after a rename", async () => {
    const a = await entity({ name: fresh("Old Name ") });
    const renamed = await call("PATCH", `/entities/${a.id}`, EDITOR, { slug: fresh("new-name-") });
    expect(renamed.status).toBe(200);
    const old = await fetch(`${t.gatewayUrl}/reviews/api/v1/entities/${a.slug}`, {
      headers: { authorization: `Bearer ${(await reviewsKit(t).tokens()).web}` },
      redirect: "manual",
    });
    expect(old.status).toBe(301);
    expect(old.headers.get("location")).toBe(`/reviews/api/v1/entities/${renamed.body.entity.slug}`);
  });
});

function person_() {
  return person("reader");
}

describe("input rules declared in the contract", () => {
  it("reports every rule a request breaks, each naming its field", async () => {
    const fields = (answer: { body: { errors?: { field: string }[] } }) => answer.body.errors?.map((e) => e.field);
    const created = await call("POST", "/entities", EDITOR, {
      name: " ",
      description: "d".repeat(20_001),
      aliases: [{ kind: "isbn", value: "123" }],
    });
    expect(created.body).toMatchObject({ status: 400, code: "request.invalid", field: "name" });
    expect(fields(created)).toEqual(["name", "description", "aliases[0].kind"]);
    const a = await entity();
    const written = await call("POST", `/entities/${a.id}/signals`, undefined, {
      kind: "review",
      text: "t".repeat(4001),
      source_key: "-shop",
      source_ref: "",
    });
    expect(fields(written)).toEqual(["kind", "text", "source_key", "source_ref"]);
  });
});
