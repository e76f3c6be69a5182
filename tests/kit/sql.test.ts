import { describe, expect, it } from "vitest";
import { sql } from "../../services/kit/db/sql.js";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["network"] });
const ctx = () => t.platform.contexts.get("network")!;

describe("the kit's sql(em, text, params)", () => {
  it("qualifies `{table}` names and leaves a pattern's `{4}` alone", async () => {
    const [row] = await sql<{ matched: boolean; accounts: number }>(
      ctx().orm.em.fork(),
      `select ? ~ '^[0-9]{4}$' as matched, (select count(*)::int from {coin_accounts}) as accounts`,
      ["2026"],
    );
    expect(row).toEqual({ matched: true, accounts: 0 });
  });
});
