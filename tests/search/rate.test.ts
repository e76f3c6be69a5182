import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { query } from "./support.js";

const t = usePlatform({ services: ["search"], env: { PF_SEARCH_ANONYMOUS_PER_MINUTE: "3" } });

describe("anonymous queries", () => {
  it("are limited per address (429 rate.limited); people are not", async () => {
    const statuses = [];
    for (let n = 0; n < 4; n++) statuses.push((await query(t, "q=x")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await t.http("GET", "/search/api/v1/suggest?q=x")).body).toMatchObject({ code: "rate.limited" });
    const ada = await t.token({ kind: "user", sub: "usr_ada1" });
    expect((await query(t, "q=x", ada)).status).toBe(200);
  });
});
