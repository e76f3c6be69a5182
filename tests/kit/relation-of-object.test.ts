import { describe, expect, it } from "vitest";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import { authClassOf, type AuthClass } from "../../services/tools/catalogue/descriptor.js";
import { Catalogue } from "../../services/tools/catalogue/index.js";
import { usePlatform } from "../support/platform.js";

/**
 * A relation `of_object` (services/kit/rpc/relations.ts) through the real route that declares one: tools' run
 * route, whose `tool` relation is the auth class of the tool the path names (anonymous, signed_in, probe), the same
 * for every caller, and RunTool's three rules (tools.proto) each take some classes. The kit answers before the
 * handler: an anonymous caller the class refuses is 401 auth.required (signing in may admit it), anyone else the
 * relation's refusal (tools.probe_refused), and an unknown, planned or mirror tool is its 404 for everyone.
 */
const t = usePlatform({ services: ["tools"] });

const catalogue = new Catalogue();

/** A tool of the catalogue by what it is, chosen at test time: the catalogue grows. */
function toolWhere(what: string, where: (tool: Catalogue["tools"][number]) => boolean): string {
  const tool = catalogue.tools.find(where);
  if (!tool) throw new Error(`the catalogue holds no ${what} tool`);
  return tool.id;
}

/** An available tool of an auth class that the run API exposes. */
const toolOf = (auth: AuthClass) =>
  toolWhere(`available ${auth}`, (tool) => tool.catalogue === "available" && tool.api && authClassOf(tool) === auth);

/**
 * An input no tool's schema takes (each closes its properties): a call the relation admits reaches the handler,
 * which refuses it 400 tools.input.invalid before anything runs (no quota taken, no job, no probe sent). Seeing
 * the relation's answer instead shows it came first.
 */
const REFUSED_INPUT = { input: { "not-a-member": true } };

async function run(tool: string, claims?: TokenClaims, headers: Record<string, string> = {}) {
  const token = claims && (await t.token(claims));
  return t.http("POST", `/tools/api/v1/tools/${encodeURIComponent(tool)}/run`, { token, body: REFUSED_INPUT, headers });
}

const user: TokenClaims = { kind: "user", sub: "usr_rel1" };
const app = (caps: string[]): TokenClaims => ({ kind: "app", app_id: "app_rel1", caps, fp: false });
const service = (caps: string[]): TokenClaims => ({ kind: "service", svc: "web", caps, aud: "pf" });
const BOTH = ["tools.tool.run", "tools.net.probe"];

/** The handler's answer: the call was let through. */
const reachedHandler = (answer: { status: number; body: { code?: string } }, who: string) =>
  expect([who, answer.status, answer.body.code]).toEqual([who, 400, "tools.input.invalid"]);

describe("a relation of the object itself (the tool's auth class) on the run route", () => {
  it("an anonymous caller on a signed_in tool is 401 auth.required before the handler; on an anonymous tool it is let through", async () => {
    const signedIn = await run(toolOf("signed_in"));
    expect(signedIn.status).toBe(401);
    expect(signedIn.body).toMatchObject({ code: "auth.required", relation: "tools.tool" });
    expect(signedIn.headers.get("www-authenticate")).toBe("Bearer");
    reachedHandler(await run(toolOf("anonymous")), "anonymous caller, anonymous tool");
    // The same call signed in reaches the handler.
    reachedHandler(await run(toolOf("signed_in"), user), "user, signed_in tool");
    reachedHandler(await run(toolOf("signed_in"), app(["tools.tool.run"])), "app, signed_in tool");
  });

  it("an anonymous caller on a probe tool is 401 auth.required too", async () => {
    const answer = await run(toolOf("probe"));
    expect([answer.status, answer.body.code]).toEqual([401, "auth.required"]);
  });

  it("a person on a probe tool is 403 tools.probe_refused: their own token, or a service acting for them", async () => {
    const own = await run(toolOf("probe"), user);
    expect(own.body).toMatchObject({ status: 403, code: "tools.probe_refused", relation: "tools.tool" });
    const actedFor = await run(toolOf("probe"), service(BOTH), { "x-pf-subject": "usr_rel1" });
    expect([actedFor.status, actedFor.body.code]).toEqual([403, "tools.probe_refused"]);
  });

  it("an app with tools.tool.run but not tools.net.probe is 403 tools.probe_refused on a probe tool; with it, let through", async () => {
    const without = await run(toolOf("probe"), app(["tools.tool.run"]));
    expect([without.status, without.body.code]).toEqual([403, "tools.probe_refused"]);
    reachedHandler(await run(toolOf("probe"), app(["tools.net.probe"])), "app with tools.net.probe");
    reachedHandler(await run(toolOf("probe"), service(BOTH)), "service acting for nobody with tools.net.probe");
    // The class is the object's: a probe-holding app runs the other classes by its tools.tool.run.
    reachedHandler(await run(toolOf("anonymous"), app(BOTH)), "app, anonymous tool");
  });

  it("an unknown, planned or mirror tool is 404 tools.tool.not_found for anonymous and signed callers alike", async () => {
    const tools: [string, string][] = [["no.such-tool", "unknown"]];
    for (const which of ["planned", "mirror"] as const)
      tools.push([toolWhere(which, (tool) => tool.catalogue === which), which]);
    for (const [tool, which] of tools)
      for (const [who, claims] of [
        ["anonymous", undefined],
        ["user", user],
        ["app", app(["tools.tool.run"])],
        ["service", service(BOTH)],
      ] as const) {
        const answer = await run(tool, claims);
        expect([tool, who, answer.status, answer.body.code, answer.body.which]).toEqual([
          tool,
          who,
          404,
          "tools.tool.not_found",
          which,
        ]);
      }
  });
});
