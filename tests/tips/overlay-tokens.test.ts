import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { creatorId } from "./overlay-support.js";

const t = usePlatform({ services: ["tips"] });
const path = "/tips/api/v1/overlay-tokens";

async function creatorToken(creator = creatorId()) {
  return { creator, token: await t.token({ kind: "user", sub: creator }) };
}

async function storedRows(creator: string): Promise<Record<string, unknown>[]> {
  const em = t.platform.contexts.get("tips")!.orm.em;
  return em.getConnection().execute(`select * from ${qualified(em, "overlay_tokens")} where creator = ?`, [creator]);
}

describe("overlay tokens", () => {
  it("are minted with their scopes; the secret is in the 201 answer only, never listed, and the database keeps only its SHA-256", async () => {
    const { creator, token } = await creatorToken();
    const minted = await t.http("POST", path, {
      token,
      body: { scopes: ["OVERLAY_SCOPE_ALERTS", "OVERLAY_SCOPE_GOALS"], label: "OBS alerts" },
    });
    expect(minted.status).toBe(201);
    expect(minted.headers.get("cache-control")).toBe("no-store");
    const { secret } = minted.body;
    expect(secret).toMatch(/^ovk_[A-Za-z0-9_-]{43}$/);
    expect(minted.body.token).toMatchObject({
      creator,
      scopes: ["OVERLAY_SCOPE_ALERTS", "OVERLAY_SCOPE_GOALS"],
      label: "OBS alerts",
      secret_hint: secret.slice(-4),
    });
    expect(minted.body.token.id).toMatch(/^ovt_/);
    expect(minted.body.token).not.toHaveProperty("secret");

    const list = await t.http("GET", path, { token });
    expect(list.body.tokens.tokens).toEqual([minted.body.token]);
    expect(list.body.secret).toBe("");
    expect(JSON.stringify(list.body)).not.toContain(secret);

    const rows = await storedRows(creator);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(JSON.stringify(rows)).not.toContain(secret.slice(4, 20));
    expect(rows[0].secret_hash).toBe(createHash("sha256").update(secret).digest("hex"));
  });

  it("mint a new secret each time", async () => {
    const { token } = await creatorToken();
    const body = { scopes: ["OVERLAY_SCOPE_ALERTS"] };
    const [a, b] = await Promise.all([t.http("POST", path, { token, body }), t.http("POST", path, { token, body })]);
    expect(a.body.secret).not.toBe(b.body.secret);
  });

  it("are revoked for good: idempotent, one tips.overlay_token.revoked event, left out of the list unless include_revoked", async () => {
    const { token } = await creatorToken();
    const minted = (await t.http("POST", path, { token, body: { scopes: ["OVERLAY_SCOPE_GOALS"] } })).body.token;
    const revoked = await t.http("POST", `${path}/${minted.id}/revoke`, { token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.token.revoked_at).toBeTruthy();
    expect(revoked.body.secret).toBe("");
    const again = await t.http("POST", `${path}/${minted.id}/revoke`, { token });
    expect(again.body.token.revoked_at).toBe(revoked.body.token.revoked_at);
    expect((await outboxEvents(t, "tips", minted.id)).map((e) => e.subject)).toEqual(["tips.overlay_token.revoked"]);
    expect((await t.http("GET", path, { token })).body.tokens.tokens).toEqual([]);
    expect(
      (await t.http("GET", `${path}?include_revoked=true`, { token })).body.tokens.tokens.map(
        (x: { id: string }) => x.id,
      ),
    ).toEqual([minted.id]);
  });

  it("of another creator answer 404 overlay_token.not_found to a revoke, which changes nothing", async () => {
    const owner = await creatorToken();
    const other = await creatorToken();
    const minted = (await t.http("POST", path, { token: owner.token, body: { scopes: ["OVERLAY_SCOPE_ALERTS"] } })).body
      .token;
    expect((await t.http("POST", `${path}/${minted.id}/revoke`, { token: other.token })).body).toMatchObject({
      status: 404,
      code: "overlay_token.not_found",
    });
    expect((await t.http("GET", path, { token: other.token })).body.tokens.tokens).toEqual([]);
    expect((await t.http("GET", path, { token: owner.token })).body.tokens.tokens[0].revoked_at).toBeUndefined();
  });

  it("are listed newest first in pages", async () => {
    const { token } = await creatorToken();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await t.http("POST", path, { token, body: { scopes: ["OVERLAY_SCOPE_ALERTS"] } })).body.token.id);
    const first = await t.http("GET", `${path}?limit=2`, { token });
    expect(first.body.tokens.tokens.map((x: { id: string }) => x.id)).toEqual([ids[2], ids[1]]);
    const second = await t.http("GET", `${path}?limit=2&cursor=${first.body.tokens.next_cursor}`, { token });
    expect(second.body.tokens).toMatchObject({ tokens: [{ id: ids[0] }], next_cursor: "" });
  });

  it("can be minted by a first-party service acting for the creator", async () => {
    const creator = creatorId();
    const service = await t.token({ kind: "service", svc: "web", caps: ["tips.overlay.token.create"] });
    const minted = await t.http("POST", path, {
      token: service,
      headers: { "x-pf-subject": creator },
      body: { scopes: ["OVERLAY_SCOPE_ALERTS"] },
    });
    expect(minted.body.token.creator).toBe(creator);
  });

  it.each([
    ["POST", { scopes: [] }, "scopes"],
    ["POST", { scopes: ["OVERLAY_SCOPE_UNSPECIFIED"] }, "scopes[0]"],
    ["POST", { scopes: ["OVERLAY_SCOPE_ALERTS"], label: "x".repeat(81) }, "label"],
    ["POST", { scopes: ["OVERLAY_SCOPE_ALERTS"], limit: 5 }, "limit"],
    ["POST", { scopes: ["OVERLAY_SCOPE_ALERTS"], include_revoked: true }, "include_revoked"],
  ])("refuse a bad mint (%s %j → 400 naming %s)", async (method, body, field) => {
    const { token } = await creatorToken();
    const answer = await t.http(method, path, { token, body });
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid", field });
  });

  it.each([
    ["scopes=OVERLAY_SCOPE_ALERTS", "scopes"],
    ["label=x", "label"],
    ["limit=500", "limit"],
    ["cursor=garbage", "cursor"],
  ])("refuse a bad listing (?%s → 400 naming %s)", async (query, field) => {
    const { token } = await creatorToken();
    const answer = await t.http("GET", `${path}?${query}`, { token });
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid", field });
  });
});
