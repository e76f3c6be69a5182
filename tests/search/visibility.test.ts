import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { delegateToken, doc, freshId, ownerToken, put, query } from "./support.js";

const t = usePlatform({ services: ["search"] });

// One owner type per file run, so counts see only this file's documents.
const type = `vis${Date.now().toString(36)}`;
const word = `zebra${Date.now().toString(36)}`;
const ids = {
  open: freshId("open"),
  named: freshId("named"),
  group: freshId("group"),
  entitled: freshId("ent"),
  member: freshId("member"),
  draft: freshId("draft"),
  deleted: freshId("deleted"),
};
let owner: string;

beforeAll(async () => {
  owner = await ownerToken(t);
  const write = (id: string, fields: Record<string, unknown>) => {
    const tier = Object.entries(ids).find(([, each]) => each === id)![0];
    return put(
      t,
      owner,
      { type, id },
      1,
      doc({ title: `${word} ${id}`, facets: { tier: { values: [tier] } }, ...fields }),
    );
  };
  await write(ids.open, {});
  await write(ids.named, { public: false, access: ["usr_ada1"] });
  await write(ids.group, { public: false, access: ["group:editors"] });
  await write(ids.entitled, { public: false, access: ["entitlement:vip-gold"] });
  await write(ids.member, { public: false, access: ["role:member"] });
  await write(ids.draft, { published: false, access: ["usr_ada1"] });
  await write(ids.deleted, { access: ["usr_ada1"] });
  const gone = await t.http("DELETE", `/search/api/v1/documents/coupons/${type}/${ids.deleted}?revision=2`, {
    token: owner,
  });
  expect(gone.status).toBe(200);
});

/** The ids a caller finds for the word, and the facet counts it is shown. */
async function seen(token?: string, headers: Record<string, string> = {}) {
  const answer = await query(t, `q=${word}&owner=coupons&type=${type}&facets=tier&limit=50`, token, headers);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const found = (answer.body.results ?? []).map((row: { id: string }) => row.id).sort();
  const counts = Object.fromEntries(
    (answer.body.facets?.tier?.values ?? []).map((entry: { value: string; count: string }) => [
      entry.value,
      Number(entry.count),
    ]),
  );
  return { found, counts };
}

const sorted = (...list: string[]) => [...list].sort();

describe("who sees what, counts included", () => {
  it("anonymous callers see public, published documents only, and count only those", async () => {
    const { found, counts } = await seen();
    expect(found).toEqual([ids.open]);
    expect(counts).toEqual({ open: 1 });
  });

  it("a person's token adds the documents naming them or their role (member), never drafts or deleted ones", async () => {
    const ada = await t.token({ kind: "user", sub: "usr_ada1" });
    const { found, counts } = await seen(ada);
    expect(found).toEqual(sorted(ids.open, ids.named, ids.member));
    expect(counts).toEqual({ open: 1, named: 1, member: 1 });
    const guest = await t.token({ kind: "user", sub: "gst_g1" });
    expect((await seen(guest)).found).toEqual([ids.open]);
  });

  it("a mod's token reads as the public, even a user token naming a person who sees more", async () => {
    const mod = await t.token({ kind: "user", sub: "usr_ada1", mod: "mod_1", caps: ["search.query.run"] });
    const { found, counts } = await seen(mod);
    expect(found).toEqual([ids.open]);
    expect(counts).toEqual({ open: 1 });
  });

  it("a service acting for a person adds their groups and entitlements as it resolved them", async () => {
    const web = await delegateToken(t);
    const forAda = await seen(web, {
      "x-pf-subject": "usr_ada1",
      "x-pf-groups": "editors",
      "x-pf-entitlements": "vip-gold",
    });
    expect(forAda.found).toEqual(sorted(ids.open, ids.named, ids.group, ids.entitled, ids.member));
    const forBob = await seen(web, { "x-pf-subject": "usr_bob1" });
    expect(forBob.found).toEqual(sorted(ids.open, ids.member));
    expect(forBob.counts).toEqual({ open: 1, member: 1 });
  });

  it("a service acting for nobody is refused (today: the subject id is required)", async () => {
    const answer = await query(t, `q=${word}`, await delegateToken(t));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "search.subject_required", field: "X-PF-Subject" });
  });

  it("X-PF-Groups and X-PF-Entitlements are refused from anyone but services", async () => {
    const ada = await t.token({ kind: "user", sub: "usr_ada1" });
    for (const header of ["x-pf-groups", "x-pf-entitlements"]) {
      expect((await query(t, `q=${word}`, ada, { [header]: "editors" })).body).toMatchObject({
        status: 403,
        code: "auth.header_refused",
      });
      expect((await query(t, `q=${word}`, undefined, { [header]: "editors" })).status).toBe(403);
    }
  });

  it("compares subjects exactly, never case-folded: usr_ADA1 is no subject, so it never reads usr_ada1's documents", async () => {
    const web = await delegateToken(t);
    // Refused by enforcement (its grammar: tests/kit/enforce.test.ts), whichever of the route's rules answers.
    const folded = await query(t, `q=${word}`, web, { "x-pf-subject": "usr_ADA1" });
    expect(folded.status).toBeGreaterThanOrEqual(400);
    expect(folded.body.results).toBeUndefined();
    for (const access of [["usr_ADA1"], ["USR_ada1"], ["ROLE:member"], [`usr_${"a".repeat(65)}`]]) {
      const written = await t.http("PUT", `/search/api/v1/documents/coupons/${type}/${freshId("case")}`, {
        token: owner,
        body: { revision: "1", document: doc({ public: false, access }) },
      });
      expect(written.body, access[0]).toMatchObject({ status: 422, field: "document.access" });
    }
  });

  it("a person cannot claim a group by their own token", async () => {
    const ada = await t.token({ kind: "user", sub: "usr_ada1" });
    expect((await seen(ada)).found).not.toContain(ids.group);
  });
});

describe("the one-document read", () => {
  const read = (id: string, token?: string, headers: Record<string, string> = {}) =>
    t.http("GET", `/search/api/v1/documents/coupons/${type}/${id}`, { token, headers });

  it("answers a visible document whole", async () => {
    const answer = await read(ids.open);
    expect(answer.status).toBe(200);
    expect(answer.body.document).toMatchObject({ owner: "coupons", type, id: ids.open, title: `${word} ${ids.open}` });
  });

  it("answers the same 404 for missing, invisible, draft and deleted documents", async () => {
    const missing = await read("nothing-here");
    expect(missing.status).toBe(404);
    const ada = await t.token({ kind: "user", sub: "usr_ada1" });
    for (const [id, token] of [
      [ids.named, undefined],
      [ids.group, ada],
      [ids.draft, ada],
      [ids.deleted, ada],
    ] as const) {
      const answer = await read(id, token);
      const { instance: _instance, ...body } = answer.body as Record<string, unknown>;
      const { instance: _missing, ...missingBody } = missing.body as Record<string, unknown>;
      expect({ status: answer.status, body }, id).toEqual({ status: missing.status, body: missingBody });
    }
    expect((await read(ids.named, ada)).status).toBe(200);
    const web = await delegateToken(t);
    expect((await read(ids.group, web, { "x-pf-subject": "usr_cy1", "x-pf-groups": "editors" })).status).toBe(200);
  });
});

describe("suggestions", () => {
  const suggest = (q: string, token?: string) =>
    t.http("GET", `/search/api/v1/suggest?q=${encodeURIComponent(q)}&owner=coupons&type=${type}`, { token });

  it("offer titles of visible documents only", async () => {
    const anonymous = await suggest(word.slice(0, 7));
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.suggestions.map((s: { id: string }) => s.id)).toEqual([ids.open]);
    const ada = await suggest(word.slice(0, 7), await t.token({ kind: "user", sub: "usr_ada1" }));
    expect(ada.body.suggestions.map((s: { id: string }) => s.id).sort()).toEqual(
      sorted(ids.open, ids.named, ids.member),
    );
  });
});

describe("query routes' callers", () => {
  it("anonymous, people and apps holding search.query.run query; apps without it are refused", async () => {
    expect((await query(t, "q=x")).status).toBe(200);
    const app = await t.token({ kind: "app", app_id: "a1", caps: ["search.query.run"] });
    expect((await query(t, "q=x", app)).status).toBe(200);
    const bare = await t.token({ kind: "app", app_id: "a2", caps: ["other.thing"] });
    expect((await query(t, "q=x", bare)).body).toMatchObject({ status: 403, code: "auth.capability_missing" });
  });

  it("a service may act for a person only with search.query.delegate", async () => {
    const runner = await t.token({ kind: "service", svc: "web", caps: ["search.query.run"] });
    expect((await query(t, "q=x", runner, { "x-pf-subject": "usr_ada1" })).body).toMatchObject({
      status: 400,
      code: "auth.acting_subject_refused",
    });
    const delegate = await delegateToken(t);
    expect((await query(t, "q=x", delegate, { "x-pf-subject": "usr_ada1" })).status).toBe(200);
  });
});
