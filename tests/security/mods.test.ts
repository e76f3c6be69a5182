import { describe, expect, it } from "vitest";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import { usePlatform } from "../support/platform.js";
import { ALL_TRADE, person, TRADE_ENV } from "../trade/support.js";

/**
 * Issue 24, finding 4: "a user token with a `mod` claim read the person's
 * private watchlist and wrote a paste as them". A token that carries `mod`
 * is a mod whatever its kind: it acts by the capabilities granted to it,
 * never as the person its token names. (Codes' manage routes, where an app's
 * mod token created and revoked releases, are in tests/codes/manage.test.ts;
 * every route's refusals in each service's generated matrix.)
 */
const t = usePlatform({ services: ["trade", "community"], env: TRADE_ENV });

/** A person's own token, and the same token carrying a mod's claim and every capability the calls below name. */
async function tokensOf(who: string) {
  const own: TokenClaims = { kind: "user", sub: who };
  const caps = [...ALL_TRADE, "community.paste.create", "community.paste.read"];
  return { own: await t.token(own), mod: await t.token({ ...own, mod: "mod_1", caps }) };
}

describe("a mod's user token is not the person it names", () => {
  it("reads none of the person's private watchlists (403 auth.person_required)", async () => {
    const who = person("m");
    const { own, mod } = await tokensOf(who);
    const made = await t.http("POST", "/trade/api/v1/watchlists", { token: own, body: { name: "Private" } });
    expect(made.status).toBe(201);
    for (const path of ["/trade/api/v1/watchlists", `/trade/api/v1/watchlists/${made.body.watchlist.id}`]) {
      const answer = await t.http("GET", path, { token: mod });
      expect(answer.body, path).toMatchObject({ status: 403, code: "auth.person_required" });
      expect(JSON.stringify(answer.body), path).not.toContain("Private");
    }
    // The person's own token still reads it.
    expect((await t.http("GET", "/trade/api/v1/watchlists", { token: own })).body.watchlists.watchlists).toHaveLength(
      1,
    );
  });

  it("writes no paste as the person (403 auth.person_required), and nothing is stored under them", async () => {
    const who = person("m");
    const { own, mod } = await tokensOf(who);
    const answer = await t.http("POST", "/community/api/pastes", { token: mod, body: { title: "As them", body: "x" } });
    expect(answer.body).toMatchObject({ status: 403, code: "auth.person_required" });
    const theirs = await t.http("GET", `/community/api/pastes?owner=${who}`, { token: own });
    expect(theirs.status).toBe(200);
    expect(theirs.body.pastes ?? []).toEqual([]);
  });
});
