import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routeAccessOf } from "../../services/kit/auth/enforce.js";
import { loadKeys, type PlatformKeys } from "../../services/kit/auth/keys.js";
import { TokenVerifier } from "../../services/kit/auth/tokens.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { modules } from "../../platform/registry.js";
import { usePlatform } from "../support/platform.js";

/**
 * Per-service token audience: codes ("an app token for the release-metadata
 * audience") declares `codes`; every other service keeps the platform's `pf`,
 * so tokens minted without --aud work there unchanged, and a token for one
 * audience is refused by the other (401 auth.wrong_audience).
 */
const t = usePlatform({ services: ["codes", "trade"] });

const manage = ["codes.release.manage", "codes.release.read"];
const createRelease = (token: string) =>
  t.http("POST", "/codes/api/v1/apps/aud1/releases", {
    token,
    body: { manifest: { name: "A", version: `1.0.${Date.now() % 100000}` }, compatibility: "*" },
  });
const tradeCaps = ["trade.instrument.resolve"];
/** Whether a trade route let the token through to its handler (it answers 200, or 404 for an unknown symbol). */
const tradeAdmits = async (token: string) => {
  const answer = await t.http("GET", "/trade/api/v1/instruments/resolve?q=AAPL", { token });
  return String(answer.body?.code ?? "").startsWith("auth.") ? answer.body.code : "admitted";
};

describe("the audience a service declares", () => {
  it("is codes for the release-metadata service and pf for every other registered service", () => {
    for (const module of modules) {
      for (const service of module.protos) {
        for (const method of service.methods) {
          expect(routeAccessOf(method).audience, `${module.key} ${method.name}`).toBe(
            module.key === "codes" ? "codes" : "pf",
          );
        }
      }
    }
  });

  it("codes takes its own audience and refuses the platform's; trade the other way round", async () => {
    const forCodes = await t.token({ kind: "app", app_id: "aud1", caps: manage, aud: "codes" });
    const forPlatform = await t.token({ kind: "app", app_id: "aud1", caps: manage });
    expect((await createRelease(forCodes)).status).toBe(201);
    expect((await createRelease(forPlatform)).body).toMatchObject({ status: 401, code: "auth.wrong_audience" });

    const svc = (aud?: string) => t.token({ kind: "service", svc: "tips", caps: tradeCaps, aud });
    expect(await tradeAdmits(await svc())).toBe("admitted");
    expect(await tradeAdmits(await svc("codes"))).toBe("auth.wrong_audience");
  });

  it("a token minted for both audiences is taken by both", async () => {
    const both = await t.token({ kind: "service", svc: "tips", caps: tradeCaps, aud: ["codes", "pf"] });
    expect(await tradeAdmits(both)).toBe("admitted");
    expect((await t.http("GET", "/codes/api/v1/apps/aud1/trust", { token: both })).body).toMatchObject({
      status: 403,
      code: "auth.capability_missing",
    });
  });

  it("reads of codes still need no token at all", async () => {
    expect((await t.http("GET", "/codes/api/v1/apps/aud1/releases")).status).toBe(200);
  });
});

describe("npm run token -- --aud", () => {
  let dataDir: string;
  let keys: PlatformKeys;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "pf-aud-"));
    keys = await loadKeys(loadConfig({ PF_DATA_DIR: dataDir }));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  const run = (...args: string[]) =>
    promisify(execFile)("node_modules/.bin/tsx", ["services/kit/auth/token-cli.ts", ...args], {
      env: { ...process.env, PF_DATA_DIR: dataDir, PF_JWT_PRIVATE_KEY: "", PF_JWT_PUBLIC_KEYS: "" },
      timeout: 30_000,
    });
  const audOf = async (...args: string[]) =>
    (await new TokenVerifier(keys).verify((await run(...args)).stdout.trim())).aud;

  it("mints for the audience named, several comma-separated, pf without it", async () => {
    const app = ["--kind", "app", "--app-id", "a1", "--caps", "codes.release.manage"];
    const [codes, both, none] = await Promise.all([
      audOf(...app, "--aud", "codes"),
      audOf(...app, "--aud", "codes,pf"),
      audOf(...app),
    ]);
    expect(codes).toEqual(["codes"]);
    expect(both).toEqual(["codes", "pf"]);
    expect(none).toEqual(["pf"]);
  }, 60_000);

  it("refuses an audience no route would take (exit 2, saying why)", async () => {
    const refused = await run("--kind", "app", "--app-id", "a1", "--aud", "Not An Audience").then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringMatching(/is not an audience name/) });
  }, 60_000);
});
