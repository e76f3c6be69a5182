import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { botCall, managerToken, robotOf } from "./support.js";

const t = usePlatform({ services: ["bot"] });
let as: ReturnType<typeof botCall>;
beforeAll(async () => {
  as = botCall(t, await managerToken(t));
});

describe("the command audit (GET /robots/{id}/audit)", () => {
  it("is newest first, paged with limit and before, each entry with its actor", async () => {
    const robot = await robotOf(t);
    for (const name of ["one", "two", "three"]) await as("PATCH", `/robots/${robot.id}`, { name });
    await as("POST", `/robots/${robot.id}/estop`);
    const actions: string[] = [];
    let before = "";
    for (let page = 0; page < 10; page++) {
      const answer = await as("GET", `/robots/${robot.id}/audit?limit=2${before ? `&before=${before}` : ""}`);
      expect(answer.status).toBe(200);
      const { entries, next_before: next } = answer.body.audit;
      expect(entries.length).toBeLessThanOrEqual(2);
      actions.push(...entries.map((entry: { action: string; detail: string }) => `${entry.action} ${entry.detail}`));
      for (const entry of entries) expect(entry).toMatchObject({ robot_id: robot.id, actor: "svc:web" });
      if (next === "") break;
      expect(next).toBe(entries.at(-1).id);
      before = next;
    }
    expect(actions).toEqual(["estop_latched ", "updated name", "updated name", "updated name", "created Rover"]);
  });

  it("answers a person's own token by its role: a viewer reads it, a stranger gets 404", async () => {
    const robot = await robotOf(t, undefined, { operators: [{ subject: "usr_au1", role: "viewer" }] });
    const own = async (person: string) =>
      (await botCall(t, await t.token({ kind: "user", sub: person }))("GET", `/robots/${robot.id}/audit`)).body;
    expect((await own("usr_au1")).audit.entries).toHaveLength(1);
    expect(await own("usr_au9")).toMatchObject({ status: 404, code: "bot.robot_not_found" });
  });
});
