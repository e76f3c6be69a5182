import { beforeAll, describe, expect, it } from "vitest";
import type { HttpAnswer } from "../support/platform.js";
import { usePlatform } from "../support/platform.js";
import { botCall, dispatchBody, jobFrame, managerToken, robotOf, runToken } from "./support.js";

const t = usePlatform({ services: ["bot"] });
let as: ReturnType<typeof botCall>;
let run: ReturnType<typeof botCall>;
beforeAll(async () => {
  as = botCall(t, await managerToken(t));
  run = botCall(t, await runToken(t));
});

/** The fields a 400 request.invalid lists in `errors`, in order. */
function faultFields(answer: HttpAnswer): string[] {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 400, code: "request.invalid" });
  return (answer.body.errors as { field: string }[]).map((fault) => fault.field);
}

describe("bot's input rules, declared in the contract", () => {
  it("report every rule a manage request breaks, each naming its field", async () => {
    const create = await as("POST", "/robots", {
      owner: "alice",
      name: " ",
      operators: [{ subject: "bob", role: "pilot", commands: ["a b", "a b"] }],
    });
    expect(create.body.field).toBe("owner");
    expect(faultFields(create)).toEqual([
      "owner",
      "name",
      "operators[0].subject",
      "operators[0].role",
      "operators[0].commands",
      "operators[0].commands[0]",
      "operators[0].commands[1]",
    ]);
    const robot = await robotOf(t);
    const update = await as("PATCH", `/robots/${robot.id}`, {
      name: "n".repeat(101),
      remove_operators: ["usr_x1", "usr_x1"],
    });
    expect(faultFields(update)).toEqual(["name", "remove_operators"]);
    const revoke = await as("POST", "/devices/dev_1/revoke", { reason: "r".repeat(501) });
    expect(faultFields(revoke)).toEqual(["reason"]);
  });

  it("hold the reads' query: owner, limit 1 to 200, before an id", async () => {
    expect(faultFields(await as("GET", "/robots?limit=0&before=nope"))).toEqual(["owner", "limit", "before"]);
    const robot = await robotOf(t);
    expect(faultFields(await as("GET", `/robots/${robot.id}/audit?limit=201`))).toEqual(["limit"]);
  });

  it("hold the dispatch's job frame: class, ttl_ms, limits, args and each input", async () => {
    const body = dispatchBody({
      job: {
        ...jobFrame({ class: "", ttl_ms: 0, net: 9 }),
        args: undefined,
        limits: undefined,
        inputs: [{ name: "a/b", media_key: "", size: -1, sha256: "nothex" }],
      },
    });
    expect(faultFields(await run("POST", "/jobs", body))).toEqual([
      "job.class",
      "job.args",
      "job.ttl_ms",
      "job.limits",
      "job.net",
      "job.inputs[0].name",
      "job.inputs[0].media_key",
      "job.inputs[0].size",
      "job.inputs[0].sha256",
    ]);
  });

  it("hold a device's pairing request", async () => {
    const answer = await t.http("POST", "/bot/api/v1/devices/pair", { body: { code: "", name: "n".repeat(101) } });
    expect(faultFields(answer)).toEqual(["code", "name"]);
  });
});
