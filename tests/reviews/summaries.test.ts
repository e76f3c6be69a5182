import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { fresh, person, REVIEWS_ENV, reviewsKit, reviewsSql, searchDocumentOf } from "./support.js";

/**
 * The summary lifecycle (spec rules 5 and 6, README "Summaries"): AI
 * proposals, the publish route's write, approve, reject, publish and
 * unpublish by an editor person, what readers and search see at each step,
 * and the database keeping a revision's contents as written.
 */
const t = usePlatform({ services: ["reviews", "ai"], env: REVIEWS_ENV });
const { call, asAi, entity, signal, runId } = reviewsKit(t);
const sql = reviewsSql(t);
const searchDocument = searchDocumentOf(t);
const EDITOR = "usr_editor1";
/** AI output's claim: the run is a real one of the AI service's stub provider (the route verifies it). */
const WORKFLOW = { workflow: "reviews.summarize_entity", run_id: "", stub_provider: false };
beforeAll(async () => {
  WORKFLOW.run_id = await runId();
});

/** An entity with one rating signal, and a proposal body citing it. */
async function entityWithSignal() {
  const a = await entity({ description: fresh("Described as ") });
  const s = await signal(a.id, 4);
  const overview = fresh("Overview ");
  const body = { overview, pros: [{ text: fresh("Pro "), citations: [s.id] }], cons: [], ...WORKFLOW };
  return { a, s, body, overview };
}

const publish = (id: string, who: string | undefined, body: unknown) =>
  call("POST", `/entities/${id}/summary/publish`, who, body);
const propose = async (id: string, body: unknown) => {
  const answer = await asAi(`/entities/${id}/summary/proposals`, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.revision.revision as number;
};
const write = async (id: string, citation: string, overview = fresh("Written ")) => {
  const answer = await publish(id, EDITOR, { write: { overview, pros: [{ text: "Quiet", citations: [citation] }] } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.revision.revision as number;
};
const actions = async (id: string) =>
  (await call("GET", `/entities/${id}/history?limit=200`, EDITOR)).body.history.entries.map(
    (entry: { action: string; detail: string }) => `${entry.action} ${entry.detail}`,
  );

describe("summary proposals", () => {
  it("take only the workflow reviews.summarize_entity with a run id, citing signals of the entity or one merged into it", async () => {
    const { a, s, body } = await entityWithSignal();
    const b = await entity();
    const sb = await signal(b.id, 2);
    for (const claim of [{ workflow: "reviews.other" }, { run_id: "" }]) {
      const refused = await asAi(`/entities/${a.id}/summary/proposals`, { ...body, ...claim });
      expect(refused.status).toBe(422);
      expect(refused.body.code).toBe("summary.workflow_required");
    }
    const foreign = await asAi(`/entities/${a.id}/summary/proposals`, {
      ...body,
      cons: [{ text: "Loud", citations: [sb.id] }],
    });
    expect(foreign.status).toBe(422);
    expect(foreign.body).toMatchObject({ code: "summary.citation_invalid", signal_id: sb.id });
    await call("POST", `/entities/${b.id}/merge`, EDITOR, { into: a.id, reason: "same product" });
    const proposed = await asAi(`/entities/${a.id}/summary/proposals`, {
      ...body,
      cons: [{ text: "Loud", citations: [sb.id, s.id] }],
    });
    expect(proposed.status).toBe(201);
    expect(proposed.body.revision.cons).toEqual([{ text: "Loud", citations: [sb.id, s.id] }]);
  });

  it("refuse rating fields (400 naming the field) and rating text in any pro or con (422 naming the field)", async () => {
    const { a, s, body } = await entityWithSignal();
    for (const field of ["rating", "score", "stars"]) {
      const refused = await asAi(`/entities/${a.id}/summary/proposals`, { ...body, [field]: 4 });
      expect(refused.status, field).toBe(400);
      expect(refused.body).toMatchObject({ code: "request.invalid", field });
    }
    const rated = await asAi(`/entities/${a.id}/summary/proposals`, {
      ...body,
      cons: [{ text: "Battery life: 3 out of 5", citations: [s.id] }],
    });
    expect(rated.status).toBe(422);
    expect(rated.body).toMatchObject({ code: "summary.rating_refused", field: "cons[0].text" });
    const written = await publish(a.id, EDITOR, { write: { overview: "Solid 8/10", pros: body.pros } });
    expect(written.body).toMatchObject({ status: 422, code: "summary.rating_refused", field: "write.overview" });
  });

  it("are never published by the call and stay off pages, summary reads and search until a person approves", async () => {
    const { a, body, overview } = await entityWithSignal();
    const reader = person("reader");
    const proposed = await asAi(`/entities/${a.id}/summary/proposals`, body);
    expect(proposed.body.revision).toMatchObject({ revision: 1, state: "proposed" });
    expect(proposed.body.revision.review).toBeUndefined();
    const forEditor = (await call("GET", `/entities/${a.id}/summary`, EDITOR)).body.summary;
    expect(forEditor.published).toBeUndefined();
    expect(forEditor.revisions.map((r: { state: string }) => r.state)).toEqual(["proposed"]);
    expect((await call("GET", `/entities/${a.id}/summary`, reader)).body.summary.revisions).toEqual([]);
    expect((await call("GET", `/entities/${a.id}/summary/revisions/1`, reader)).status).toBe(404);
    expect((await call("GET", `/entities/${a.id}/summary/revisions/1`, EDITOR)).status).toBe(200);
    const page = (await call("GET", `/entities/${a.id}`, reader)).body.page;
    expect(page.summary).toBeUndefined();
    expect(page.summary_revisions).toEqual([]);
    expect((await searchDocument(a.id))?.body).not.toContain(overview);

    await publish(a.id, EDITOR, { approve: { revision: 1 } });
    const approved = (await call("GET", `/entities/${a.id}`, reader)).body.page;
    expect(approved.summary).toBeUndefined();
    expect(approved.summary_revisions.map((r: { state: string }) => r.state)).toEqual(["approved"]);
    // Search carries the published summary only.
    expect((await searchDocument(a.id))?.body).not.toContain(overview);

    await publish(a.id, EDITOR, { publish: { revision: 1 } });
    expect((await call("GET", `/entities/${a.id}`, reader)).body.page.summary).toMatchObject({
      revision: 1,
      state: "published",
    });
    expect((await searchDocument(a.id))?.body).toContain(overview);
    expect((await searchDocument(a.id))?.body).toContain(body.pros[0].text);
  });
});

describe("the publish route", () => {
  it("writes a revision approved by its writer: an editor person only, citing signals of the entity", async () => {
    const { a, s } = await entityWithSignal();
    const other = await signal((await entity()).id, 3);
    const body = { write: { overview: "Built well", pros: [{ text: "Sturdy", citations: [s.id] }] } };
    expect((await publish(a.id, person(), body)).body).toMatchObject({ status: 403, code: "auth.editor_required" });
    expect((await publish(a.id, undefined, body)).body).toMatchObject({ status: 403, code: "auth.person_required" });
    const foreign = await publish(a.id, EDITOR, { write: { pros: [{ text: "Sturdy", citations: [other.id] }] } });
    expect(foreign.body).toMatchObject({ status: 422, code: "summary.citation_invalid" });
    const written = await publish(a.id, EDITOR, body);
    expect(written.status).toBe(200);
    expect(written.body.revision).toMatchObject({
      revision: 1,
      state: "approved",
      authorship: { person: EDITOR },
      review: { approver: EDITOR },
    });
    expect(written.body.published).toBeUndefined();
    expect(await actions(a.id)).toContain("summary_approved revision 1");
  });

  it("approves or rejects a proposal once, by a person on the list; AI output and a service alone never approve", async () => {
    const { a, body } = await entityWithSignal();
    const [first, second] = [await propose(a.id, body), await propose(a.id, body)];
    const approve = { approve: { revision: first, note: "Checked the sources" } };
    const byAi = await asAi(`/entities/${a.id}/summary/publish`, approve, EDITOR);
    expect(byAi.body).toMatchObject({ status: 403, code: "auth.person_required" });
    const aiAlone = await asAi(`/entities/${a.id}/summary/publish`, approve);
    expect(aiAlone.body).toMatchObject({ status: 403, code: "auth.person_required" });
    expect((await publish(a.id, undefined, approve)).body.code).toBe("auth.person_required");
    expect((await publish(a.id, person(), approve)).body.code).toBe("auth.editor_required");
    const approved = await publish(a.id, EDITOR, approve);
    expect(approved.status).toBe(200);
    expect(approved.body.revision).toMatchObject({
      state: "approved",
      authorship: { ai: { workflow: "reviews.summarize_entity", run_id: WORKFLOW.run_id, stub_provider: true } },
      review: { approver: EDITOR, note: "Checked the sources" },
    });
    expect(approved.body.published).toBeUndefined();
    expect((await publish(a.id, EDITOR, approve)).body).toMatchObject({ status: 409, code: "summary.not_proposed" });
    const rejected = await publish(a.id, EDITOR, { reject: { revision: second, note: "Vague" } });
    expect(rejected.body.revision).toMatchObject({ state: "rejected", review: { approver: EDITOR, note: "Vague" } });
    expect(rejected.body.revision.review.verdict).not.toBe(approved.body.revision.review.verdict);
    expect((await publish(a.id, EDITOR, { approve: { revision: second } })).body.code).toBe("summary.not_proposed");
    // Only reviewed proposals are published; a rejected one never.
    const third = await propose(a.id, body);
    for (const revision of [second, third]) {
      const refused = await publish(a.id, EDITOR, { publish: { revision } });
      expect(refused.body, `revision ${revision}`).toMatchObject({ status: 409, code: "summary.not_approved" });
    }
    const reader = person("reader");
    const seen = (await call("GET", `/entities/${a.id}/summary`, reader)).body.summary.revisions;
    expect(seen.map((r: { revision: number }) => r.revision)).toEqual([first]);
    expect(await actions(a.id)).toEqual(
      expect.arrayContaining([`summary_approved revision ${first}`, `summary_rejected revision ${second}`]),
    );
  });

  it("publishes one revision at a time, unpublishing the one before; readers and search follow", async () => {
    const { a, s } = await entityWithSignal();
    const reader = person("reader");
    const [text1, text2] = [fresh("First "), fresh("Second ")];
    const [one, two] = [await write(a.id, s.id, text1), await write(a.id, s.id, text2)];
    const first = await publish(a.id, EDITOR, { publish: { revision: one } });
    expect(first.body).toMatchObject({ revision: { revision: one, state: "published" }, published: { revision: one } });
    expect(first.body.revision.published_at).toBeDefined();
    expect((await searchDocument(a.id))?.body).toContain(text1);

    const second = await publish(a.id, EDITOR, { publish: { revision: two } });
    expect(second.body.published.revision).toBe(two);
    const displaced = (await call("GET", `/entities/${a.id}/summary/revisions/${one}`, reader)).body;
    expect(displaced.summary_revision.state).toBe("unpublished");
    expect(await actions(a.id)).toContain(`summary_unpublished revision ${one}`);
    const events = await sql<{ payload: string }>(`select payload from {outbox} where subject = ?`, [
      "reviews.summary.unpublished",
    ]);
    expect(events.map((e) => JSON.parse(e.payload))).toContainEqual(
      expect.objectContaining({ entity_id: a.id, revision: one, state: "unpublished" }),
    );
    expect((await searchDocument(a.id))?.body).toContain(text2);
    expect((await searchDocument(a.id))?.body).not.toContain(text1);
    const history = (await actions(a.id)).length;
    const again = await publish(a.id, EDITOR, { publish: { revision: two } });
    expect(again.body.revision.state).toBe("published");
    expect((await actions(a.id)).length).toBe(history);

    const off = await publish(a.id, EDITOR, { unpublish: { revision: two } });
    expect(off.body.revision.state).toBe("unpublished");
    expect(off.body.published).toBeUndefined();
    expect((await call("GET", `/entities/${a.id}`, reader)).body.page.summary).toBeUndefined();
    expect((await searchDocument(a.id))?.body).not.toContain(text2);
    const three = await write(a.id, s.id);
    const never = await publish(a.id, EDITOR, { unpublish: { revision: three } });
    expect(never.body).toMatchObject({ status: 409, code: "summary.not_published" });
    const back = await publish(a.id, EDITOR, { publish: { revision: one } });
    expect(back.body.published.revision).toBe(one);
    expect((await searchDocument(a.id))?.body).toContain(text1);
  });

  it("refuses a request without one action, a bad revision number, an unknown revision and a note on publish", async () => {
    const { a, s } = await entityWithSignal();
    await write(a.id, s.id);
    expect((await publish(a.id, EDITOR, {})).body).toMatchObject({ status: 400, field: "action" });
    expect((await publish(a.id, EDITOR, { approve: { revision: 0 } })).body).toMatchObject({
      status: 400,
      field: "approve.revision",
    });
    expect((await publish(a.id, EDITOR, { publish: { revision: 9 } })).body).toMatchObject({
      status: 404,
      code: "summary.not_found",
    });
    expect((await publish(a.id, EDITOR, { publish: { revision: 1, note: "now" } })).body).toMatchObject({
      status: 400,
      field: "publish.note",
    });
  });
});

describe("search documents of entities", () => {
  it("carry an active entity's name and description; a merge or a delete tombstones it, a split brings it back", async () => {
    const description = fresh("Made of ");
    const a = await entity({ description });
    const b = await entity();
    expect(await searchDocument(a.id)).toMatchObject({ title: a.name });
    expect((await searchDocument(a.id))?.body).toContain(description);
    const [name, described] = [fresh("Renamed "), fresh("Now made of ")];
    await call("PATCH", `/entities/${a.id}`, EDITOR, { name, description: described });
    expect(await searchDocument(a.id)).toMatchObject({ title: name });
    expect((await searchDocument(a.id))?.body).toContain(described);
    await call("POST", `/entities/${a.id}/merge`, EDITOR, { into: b.id, reason: "same" });
    expect(await searchDocument(a.id)).toBeNull();
    expect(await searchDocument(b.id)).toMatchObject({ title: b.name });
    await call("POST", `/entities/${a.id}/split`, EDITOR, { reason: "not the same" });
    expect(await searchDocument(a.id)).toMatchObject({ title: name });
    expect((await call("DELETE", `/entities/${a.id}`, EDITOR)).status).toBe(200);
    expect(await searchDocument(a.id)).toBeNull();
    expect((await call("GET", `/entities/${a.id}`, EDITOR)).body.code).toBe("entity.not_found");
  });
});

describe("summary revisions in the database", () => {
  it("refuse an UPDATE of their content and a DELETE; their review state changes in place", async () => {
    const { a, body } = await entityWithSignal();
    const n = await propose(a.id, body);
    const where = "where entity_id = ? and revision = ?";
    for (const change of [
      `overview = 'changed'`,
      `pros = '[]'::jsonb`,
      `author = 'usr_someone'`,
      `created_at = now()`,
      `state = 'approved', overview = 'changed'`,
    ])
      await expect(sql(`update {summary_revisions} set ${change} ${where}`, [a.id, n]), change).rejects.toThrow(
        /immutable/,
      );
    await expect(sql(`delete from {summary_revisions} ${where}`, [a.id, n])).rejects.toThrow(/immutable/);
    await sql(
      `update {summary_revisions} set state = 'approved', approved = true, reviewed_by = 'usr_editor1',
       reviewed_at = now(), review_note = 'ok', flag = 'checked', published_at = null ${where}`,
      [a.id, n],
    );
    const row = (await call("GET", `/entities/${a.id}/summary/revisions/${n}`, EDITOR)).body.summary_revision;
    expect(row).toMatchObject({ state: "approved", flag: "checked", overview: body.overview });
  });
});
