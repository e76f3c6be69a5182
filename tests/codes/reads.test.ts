import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { appClaims, appManifest, codesCalls, freshApp } from "./support.js";

const t = usePlatform({ services: ["codes"] });
const codes = codesCalls(t);

describe("reads are public: no token needed, drafts never returned, to anyone", () => {
  it("GET /apps/{app}/releases lists published, deprecated and revoked releases newest first, with the trust tier; never drafts", async () => {
    const app = freshApp();
    const published = await codes.release(app, "1.0.0");
    const deprecated = await codes.release(app, "1.1.0");
    await codes.act(app, deprecated, "deprecate", { reason: "Old.", replacement: published });
    const revoked = await codes.release(app, "1.2.0");
    await codes.act(app, revoked, "revoke");
    const draft = await codes.release(app, "2.0.0", { draft: true });
    const revokedDraft = await codes.release(app, "2.1.0", { draft: true });
    await codes.act(app, revokedDraft, "revoke");

    // Anonymous, and the owning app itself with a read token: the same list.
    for (const token of [undefined, await codes.as(app)]) {
      const answer = await t.http("GET", `/codes/api/v1/apps/${app}/releases`, { token });
      expect(answer.status).toBe(200);
      const page = answer.body.releases;
      expect(page).toMatchObject({ app, trust: { app, tier: "TRUST_TIER_UNREVIEWED" }, next_cursor: "" });
      expect(page.releases.map((release: { id: string }) => release.id)).toEqual([revoked, deprecated, published]);
      expect(page.releases.map((release: { status: string }) => release.status)).toEqual([
        "RELEASE_STATUS_REVOKED",
        "RELEASE_STATUS_DEPRECATED",
        "RELEASE_STATUS_PUBLISHED",
      ]);
      expect(page.releases[1]).toMatchObject({
        manifest: appManifest("1.1.0"),
        compatibility: ">=1.0.0 <2.0.0",
        deprecation_reason: "Old.",
        replacement: published,
        trust_tier: "TRUST_TIER_UNREVIEWED",
      });
      expect(JSON.stringify(page)).not.toContain(draft);
      expect(JSON.stringify(page)).not.toContain(revokedDraft);
    }
  });

  it("pages with limit and cursor; limit outside 1–200 and a forged cursor are 400", async () => {
    const app = freshApp();
    const ids = [];
    for (const version of ["1.0.0", "1.0.1", "1.0.2"]) ids.push(await codes.release(app, version));
    const first = await t.http("GET", `/codes/api/v1/apps/${app}/releases?limit=2`);
    expect(first.body.releases.releases.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    const second = await t.http(
      "GET",
      `/codes/api/v1/apps/${app}/releases?limit=2&cursor=${first.body.releases.next_cursor}`,
    );
    expect(second.body.releases).toMatchObject({ next_cursor: "" });
    expect(second.body.releases.releases.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
    for (const query of ["limit=0", "limit=201", "cursor=forged"]) {
      const answer = await t.http("GET", `/codes/api/v1/apps/${app}/releases?${query}`);
      expect(answer.body, query).toMatchObject({ status: 400, code: "request.invalid" });
    }
  });

  it("an app without releases lists none (200), and its trust is unreviewed", async () => {
    const app = freshApp();
    const list = await t.http("GET", `/codes/api/v1/apps/${app}/releases`);
    expect(list.body.releases).toMatchObject({ app, releases: [] });
    const trust = await t.http("GET", `/codes/api/v1/apps/${app}/trust`);
    expect(trust.status).toBe(200);
    expect(trust.body).toEqual({ trust: { app, tier: "TRUST_TIER_UNREVIEWED", note: "" } });
  });

  it("GET /releases/{id} answers a public release; a draft answers 404 as a missing one does, even to its own app", async () => {
    const app = freshApp();
    const published = await codes.release(app, "1.0.0");
    const draft = await codes.release(app, "1.1.0", { draft: true });
    const answer = await t.http("GET", `/codes/api/v1/releases/${published}`);
    expect(answer.status).toBe(200);
    expect(answer.body.release).toMatchObject({ id: published, app, status: "RELEASE_STATUS_PUBLISHED" });
    for (const token of [undefined, await codes.as(app)]) {
      for (const id of [draft, "rel_0000000000000000000000000"]) {
        const hidden = await t.http("GET", `/codes/api/v1/releases/${id}`, { token });
        expect(hidden.status, id).toBe(404);
        expect(hidden.body, id).toMatchObject({ code: "codes.release_not_found" });
      }
    }
  });

  it("a draft revoked before it was published stays hidden: it was never public", async () => {
    const app = freshApp();
    const id = await codes.release(app, "1.0.0", { draft: true });
    await codes.act(app, id, "revoke");
    expect((await t.http("GET", `/codes/api/v1/releases/${id}`)).status).toBe(404);
  });

  it("refuses bad input by name: a malformed app or release id (400)", async () => {
    for (const [path, field] of [
      ["/codes/api/v1/apps/bad%20app/releases", "app"],
      ["/codes/api/v1/apps/bad%20app/trust", "app"],
      ["/codes/api/v1/releases/nope", "id"],
    ]) {
      const answer = await t.http("GET", path);
      expect(answer.body, path).toMatchObject({ status: 400, code: "request.invalid", field });
    }
  });

  it("a token sent on a read is checked like any: another audience is 401, a token without the read capability 403", async () => {
    const app = freshApp();
    const path = `/codes/api/v1/apps/${app}/releases`;
    const platformToken = await t.token(appClaims(app, { aud: "pf" }));
    expect((await t.http("GET", path, { token: platformToken })).body).toMatchObject({
      status: 401,
      code: "auth.wrong_audience",
    });
    const manageOnly = await t.token(appClaims(app, { caps: ["codes.release.manage"] }));
    expect((await t.http("GET", path, { token: manageOnly })).body).toMatchObject({
      status: 403,
      code: "auth.capability_missing",
    });
  });
});
