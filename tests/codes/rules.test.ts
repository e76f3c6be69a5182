import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { CodesService } from "../../gen/pf/codes/v1/codes_pb.js";
import type { TrustTier } from "../../gen/pf/codes/v1/releases_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import type { HttpAnswer } from "../support/platform.js";
import { usePlatform } from "../support/platform.js";
import { AUD, appManifest, codesCalls, freshApp } from "./support.js";

const t = usePlatform({ services: ["codes"] });
const codes = codesCalls(t);

/** The fields a 400 request.invalid lists in `errors`, in order. */
function faultFields(answer: HttpAnswer): string[] {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 400, code: "request.invalid" });
  return (answer.body.errors as { field: string }[]).map((fault) => fault.field);
}

describe("codes' input rules, declared in the contract", () => {
  it("report every rule a request breaks, each naming its field, over the gateway and over RPC", async () => {
    const create = await codes.create("bad%20app", { manifest: appManifest("1.0.0"), compatibility: "x".repeat(257) });
    expect(faultFields(create)).toEqual(["app", "compatibility"]);
    // Create requires a manifest (rule faults are answered before the token is compared with the path).
    const bare = await codes.create("bad%20app", { compatibility: "*" });
    expect(bare.body.errors).toEqual([
      expect.objectContaining({ field: "app" }),
      expect.objectContaining({ field: "manifest", rule: "required" }),
    ]);
    expect(faultFields(await t.http("GET", "/codes/api/v1/apps/bad%20app/releases?limit=0"))).toEqual(["app", "limit"]);

    const staff = await t.token({ kind: "service", svc: "network", caps: ["codes.trust.manage"], aud: AUD });
    const refusal = await t
      .client(CodesService, staff)
      .setTrust({ app: "", tier: 9 as TrustTier, note: "n".repeat(501) })
      .then(
        () => undefined,
        (error: unknown) => ConnectError.from(error).findDetails(ProblemSchema)[0],
      );
    expect(refusal).toMatchObject({ status: 400, code: "request.invalid" });
    const errors = refusal!.extensions!.errors as { field: string }[];
    expect(errors.map((fault) => fault.field)).toEqual(["app", "tier", "note"]);

    const app = freshApp();
    const id = await codes.release(app, "1.0.0");
    const deprecate = await codes.act(app, id, "deprecate", { reason: "r".repeat(501), replacement: "rel_" });
    expect(faultFields(deprecate)).toEqual(["reason", "replacement"]);
  });
});
