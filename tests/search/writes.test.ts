import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { doc, freshId, ownerToken, put, query } from "./support.js";

const t = usePlatform({ services: ["search"] });

describe("document writes by their owner", () => {
  it("indexes a document and a query finds it; the owner reads it back with its revision", async () => {
    const token = await ownerToken(t);
    const id = freshId();
    const write = await put(t, token, { id }, 3, doc({ title: "Umbrella discount", body: "Twenty percent off" }));
    expect(write).toMatchObject({
      type: "code",
      id,
      revision: "3",
      outcome: "WRITE_OUTCOME_APPLIED",
      current_revision: "3",
    });
    const found = await query(t, "q=umbrella&owner=coupons");
    expect(found.status).toBe(200);
    expect(found.body.results.map((r: { id: string }) => r.id)).toContain(id);
    const held = await t.http("GET", `/search/api/v1/owners/coupons/documents/code/${id}`, { token });
    expect(held.status).toBe(200);
    expect(held.body.document).toMatchObject({ type: "code", id, revision: "3", deleted: false });
    expect(held.body.document.document.title).toBe("Umbrella discount");
  });
});

describe("revision order", () => {
  const path = (id: string) => `/search/api/v1/documents/coupons/code/${id}`;

  it("an older revision never overwrites a newer one: stale, recorded as a rejection the owner reads", async () => {
    const token = await ownerToken(t);
    const id = freshId();
    await put(t, token, { id }, 5, doc({ title: "Fifth" }));
    const late = await put(t, token, { id }, 4, doc({ title: "Fourth" }));
    expect(late).toMatchObject({
      outcome: "WRITE_OUTCOME_STALE",
      code: "search.revision_stale",
      current_revision: "5",
    });
    const held = await t.http("GET", `/search/api/v1/owners/coupons/documents/code/${id}`, { token });
    expect(held.body.document).toMatchObject({ revision: "5", document: { title: "Fifth" } });
    const rejections = await t.http("GET", "/search/api/v1/owners/coupons/rejections?limit=5", { token });
    expect(rejections.body.rejections[0]).toMatchObject({ id, revision: "4", code: "search.revision_stale" });
    // The same write again (a relay's retry) is applied, not stale.
    expect(await put(t, token, { id }, 5, doc({ title: "Fifth" }))).toMatchObject({ outcome: "WRITE_OUTCOME_APPLIED" });
  });

  it("at equal revision a deletion wins, and the tombstone keeps a late older write out", async () => {
    const token = await ownerToken(t);
    const id = freshId();
    await put(t, token, { id }, 2, doc({ title: "Tombstoned soon" }));
    const gone = await t.http("DELETE", `${path(id)}?revision=2`, { token });
    expect(gone.body.write).toMatchObject({ outcome: "WRITE_OUTCOME_APPLIED", current_revision: "2" });
    expect(await put(t, token, { id }, 2, doc())).toMatchObject({ outcome: "WRITE_OUTCOME_STALE" });
    expect(await put(t, token, { id }, 1, doc())).toMatchObject({ outcome: "WRITE_OUTCOME_STALE" });
    const held = await t.http("GET", `/search/api/v1/owners/coupons/documents/code/${id}`, { token });
    expect(held.body.document).toMatchObject({ revision: "2", deleted: true });
    expect((await t.http("GET", `/search/api/v1/documents/coupons/code/${id}`)).status).toBe(404);
    // A newer revision brings it back.
    expect(await put(t, token, { id }, 3, doc({ title: "Back" }))).toMatchObject({ outcome: "WRITE_OUTCOME_APPLIED" });
    expect((await t.http("GET", `/search/api/v1/documents/coupons/code/${id}`)).status).toBe(200);
  });
});

describe("owner binding and bad writes", () => {
  it("the owner in the path must be the caller's own slug, on writes and reads", async () => {
    const token = await ownerToken(t, "deals");
    for (const [method, path] of [
      ["PUT", "/search/api/v1/documents/coupons/code/x1"],
      ["DELETE", "/search/api/v1/documents/coupons/code/x1?revision=1"],
      ["GET", "/search/api/v1/owners/coupons/documents"],
      ["GET", "/search/api/v1/owners/coupons/documents/code/x1"],
      ["GET", "/search/api/v1/owners/coupons/rejections"],
    ]) {
      const body = method === "PUT" ? { revision: "1", document: doc() } : undefined;
      expect((await t.http(method, path, { token, body })).body, `${method} ${path}`).toMatchObject({
        status: 403,
        code: "search.owner_mismatch",
      });
    }
  });

  it("an invalid document is 422 search.document_invalid naming the field, and recorded", async () => {
    const token = await ownerToken(t, "tips");
    const id = freshId("bad");
    const answer = await t.http("PUT", `/search/api/v1/documents/tips/page/${id}`, {
      token,
      body: { revision: "1", document: doc({ title: "" }) },
    });
    expect(answer.body).toMatchObject({ status: 422, code: "search.document_invalid", field: "document.title" });
    for (const [fields, field] of [
      [{ lang: "not a tag" }, "document.lang"],
      [{ access: ["everyone"] }, "document.access"],
      [{ facets: { "Bad Key": { values: ["x"] } } }, "document.facets.Bad Key"],
      [{ url: "javascript:alert(1)" }, "document.url"],
    ] as const) {
      const refused = await t.http("PUT", `/search/api/v1/documents/tips/page/${id}`, {
        token,
        body: { revision: "1", document: doc(fields) },
      });
      expect(refused.body, field).toMatchObject({ status: 422, field });
    }
    const rejections = await t.http("GET", "/search/api/v1/owners/tips/rejections", { token });
    expect(rejections.body.rejections[0]).toMatchObject({ id, code: "search.document_invalid" });
    const zero = await t.http("PUT", `/search/api/v1/documents/tips/page/${id}`, {
      token,
      body: { revision: "0", document: doc() },
    });
    expect(zero.body).toMatchObject({ status: 400, code: "request.invalid", field: "revision" });
  });

  it("the inventory pages through ids and revisions, tombstones included", async () => {
    const token = await ownerToken(t, "games");
    const written = [freshId("i"), freshId("i"), freshId("i")];
    for (const [n, id] of written.entries()) {
      await t.http("PUT", `/search/api/v1/documents/games/mod/${id}`, {
        token,
        body: { revision: String(n + 1), document: doc() },
      });
    }
    await t.http("DELETE", `/search/api/v1/documents/games/mod/${written[0]}?revision=9`, { token });
    const first = await t.http("GET", "/search/api/v1/owners/games/documents?type=mod&limit=2", { token });
    const second = await t.http(
      "GET",
      `/search/api/v1/owners/games/documents?type=mod&limit=2&cursor=${first.body.next_cursor}`,
      {
        token,
      },
    );
    const all = [...first.body.documents, ...second.body.documents];
    expect(all.map((row: { id: string }) => row.id)).toEqual([...written].sort());
    expect(all.find((row: { id: string }) => row.id === written[0])).toMatchObject({ revision: "9", deleted: true });
    expect(second.body.next_cursor ?? "").toBe("");
    const bad = await t.http("GET", "/search/api/v1/owners/games/documents?cursor=nope", { token });
    expect(bad.body).toMatchObject({ status: 400, field: "cursor" });
  });

  it("the inventory and the rejections take the platform's one page range: limit 1 to 200, default 50", async () => {
    const token = await ownerToken(t, "media");
    for (let n = 0; n < 51; n++) {
      const answer = await t.http("PUT", `/search/api/v1/documents/media/page/${freshId("p")}`, {
        token,
        body: { revision: "1", document: doc() },
      });
      expect(answer.status).toBe(200);
    }
    const unset = await t.http("GET", "/search/api/v1/owners/media/documents", { token });
    expect(unset.body.documents).toHaveLength(50);
    expect(unset.body.next_cursor).not.toBe("");
    for (const path of ["documents", "rejections"])
      for (const limit of [0, 201]) {
        const answer = await t.http("GET", `/search/api/v1/owners/media/${path}?limit=${limit}`, { token });
        expect(answer.body, `${path} ${limit}`).toMatchObject({ status: 400, code: "request.invalid", field: "limit" });
      }
    const most = await t.http("GET", "/search/api/v1/owners/media/documents?limit=200", { token });
    expect(most.body.documents).toHaveLength(51);
  });
});
