import { beforeAll, describe, expect, it } from "vitest";
import { ModManageRequestSchema } from "../../gen/pf/games/v1/mods_pb.js";
import { CAPABILITY_PATTERN, KEY_PATTERN } from "../../services/kit/documents/mod-manifest.js";
import { fieldRulesOf } from "../../services/kit/rpc/field-rules.js";
import type { HttpAnswer } from "../support/platform.js";
import { usePlatform } from "../support/platform.js";
import { gamesCall, installed, managerToken } from "./support.js";

const t = usePlatform({ services: ["games"] });
let token: string;
let as: ReturnType<typeof gamesCall>;
beforeAll(async () => {
  token = await managerToken(t);
  as = gamesCall(t, token);
});

/** The fields a 400 request.invalid lists in `errors`, in order. */
function faultFields(answer: HttpAnswer): string[] {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 400, code: "request.invalid" });
  return (answer.body.errors as { field: string }[]).map((fault) => fault.field);
}

describe("games' input rules, declared in the contract", () => {
  it("report every rule a request breaks, each naming its field", async () => {
    expect(faultFields(await as("POST", "/mods", { server: "EU 1" }))).toEqual(["manifest", "content_pack", "server"]);
    const { id } = await installed(t, token);
    expect(faultFields(await as("POST", `/mods/${id}/grants`, { capability: `${"x".repeat(60)}.Read` }))).toEqual([
      "capability",
      "capability",
    ]);
    expect(faultFields(await as("GET", `/mods/${id}/audit?limit=201`))).toEqual(["limit"]);
    const list = await t.http("GET", `/games/api/v1/mods?game=${"g".repeat(65)}&server=${"s".repeat(65)}&status=9`);
    expect(faultFields(list)).toEqual(["game", "server", "status"]);
  });

  it("hold servers and capabilities to the shapes a manifest gives them", () => {
    const pattern = (name: "server" | "capability") => {
      const rules = fieldRulesOf(ModManageRequestSchema.field[name]);
      return rules?.type.case === "string" ? rules.type.value.pattern : undefined;
    };
    expect(pattern("server")).toBe(KEY_PATTERN);
    expect(pattern("capability")).toBe(CAPABILITY_PATTERN);
  });
});
