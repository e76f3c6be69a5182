import { create, getOption, setExtension, type DescService, type MessageInitShape } from "@bufbuild/protobuf";
import { MethodOptionsSchema, ServiceOptionsSchema } from "@bufbuild/protobuf/wkt";
import { ConnectError, createContextValues, type UnaryRequest } from "@connectrpc/connect";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http } from "../../gen/google/api/annotations_pb.js";
import {
  access,
  AccessSchema,
  rate_limits,
  RateLimitSchema,
  service_key,
  Visibility,
} from "../../gen/pf/v1/options_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { Admission, admitsAnonymous, routeAccessOf } from "../../services/kit/auth/enforce.js";
import { loadKeys, type PlatformKeys } from "../../services/kit/auth/keys.js";
import { mintToken, TokenVerifier, type TokenClaims } from "../../services/kit/auth/tokens.js";
import { CLIENT_IP_HEADER, ClientKeys } from "../../services/kit/handler/client-address.js";
import { declaredRateLimit, RateLimits } from "../../services/kit/rpc/rate-limits.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { modules } from "../../platform/registry.js";
import { probeService } from "../support/probe-service.js";

type Limit = MessageInitShape<typeof RateLimitSchema>;
type Rule = MessageInitShape<typeof AccessSchema>;

/** The probe's declaration: anonymous 2 a minute (its setting unset), people 3, apps and services unlimited. */
const READ: Limit = {
  name: "read",
  anonymous: { perMinute: 2, setting: "PF_PROBE_ANONYMOUS_READS_PER_MINUTE" },
  person: { perMinute: 3, setting: "PF_PROBE_READS_PER_MINUTE" },
};
const OPEN_READ: Rule = { visibility: Visibility.PUBLIC, anonymous: true, rateLimit: "read" };

/** A real service descriptor (`probe`) declaring these limits, its one RPC under this access rule. */
function probeWith(rule: Rule, limits: Limit[] = [READ]): DescService {
  const methodOptions = create(MethodOptionsSchema);
  setExtension(methodOptions, access, create(AccessSchema, rule));
  const serviceOptions = create(ServiceOptionsSchema);
  setExtension(serviceOptions, service_key, "probe");
  setExtension(
    serviceOptions,
    rate_limits,
    limits.map((limit) => create(RateLimitSchema, limit)),
  );
  return probeService([{ name: "Read", options: methodOptions }], serviceOptions);
}

let dataDir: string;
let keys: PlatformKeys;
let admission: Admission;
let clientKeys: ClientKeys;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "pf-rate-limits-"));
  const config = loadConfig({ PF_DATA_DIR: dataDir });
  keys = await loadKeys(config);
  clientKeys = await ClientKeys.load(config);
  admission = new Admission(new TokenVerifier(keys));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

/**
 * The probe served as the host serves a service: admission, then the
 * declared limits, then a handler that counts the calls it answers.
 */
function serve(rule: Rule = OPEN_READ, env: Record<string, string> = {}, maxCallers?: number) {
  const service = probeWith(rule);
  const clock = new ManualClock(new Date("2026-03-01T12:00:30Z"));
  const limits = new RateLimits([service], env, clientKeys, clock, maxCallers);
  let handled = 0;
  const chain = admission.interceptor()(
    limits.interceptor()(async () => {
      handled++;
      return {} as never;
    }),
  );
  /** One call from this address (none: between services in process), with this token; its problem, if refused. */
  const read = async (ip?: string, claims?: TokenClaims) => {
    const header = new Headers(ip === undefined ? {} : { [CLIENT_IP_HEADER]: ip });
    if (claims) header.set("authorization", `Bearer ${await mintToken(keys, claims)}`);
    const req = { method: service.methods[0], header, contextValues: createContextValues() } as unknown as UnaryRequest;
    try {
      await chain(req);
      return undefined;
    } catch (error) {
      return ConnectError.from(error).findDetails(ProblemSchema)[0];
    }
  };
  return { read, clock, handled: () => handled };
}

const user = (sub: string): TokenClaims => ({ kind: "user", sub });

describe("declared rate limits", () => {
  it("refuse the (N+1)th anonymous read from one address, 429 rate.limited before the handler runs; another address passes", async () => {
    const probe = serve();
    expect(await probe.read("203.0.113.7")).toBeUndefined();
    expect(await probe.read("203.0.113.7")).toBeUndefined();
    const refused = await probe.read("203.0.113.7");
    expect(refused).toMatchObject({ status: 429, code: "rate.limited" });
    // Until the minute's window ends (the clock stands at :30), as the gateway's Retry-After says.
    expect(refused?.extensions).toMatchObject({ rule: "probe.read.anonymous", retry_after_seconds: 30 });
    expect(probe.handled()).toBe(2);
    expect(await probe.read("203.0.113.8")).toBeUndefined();
    expect(probe.handled()).toBe(3);
  });

  it("hold a bounded number of callers a window: past it an unseen address is refused, a counted one goes on", async () => {
    const probe = serve(OPEN_READ, {}, 2);
    expect(await probe.read("203.0.113.1")).toBeUndefined();
    expect(await probe.read("2001:db8:9:1::1")).toBeUndefined();
    expect(await probe.read("2001:db8:9:2::1")).toMatchObject({ status: 429, code: "rate.limited" });
    expect(await probe.read("203.0.113.1")).toBeUndefined();
    probe.clock.advance(60_000);
    expect(await probe.read("2001:db8:9:2::1")).toBeUndefined();
  });

  it("count an IPv6 client by its /64: a neighbour in the same /64 shares the limit, another /64 does not", async () => {
    const probe = serve();
    expect(await probe.read("2001:db8:1:2::1")).toBeUndefined();
    expect(await probe.read("2001:db8:1:2:ffff:1:2:3")).toBeUndefined();
    expect(await probe.read("2001:db8:1:2::9")).toMatchObject({ status: 429, code: "rate.limited" });
    expect(await probe.read("2001:db8:1:3::1")).toBeUndefined();
  });

  it("count a token holder in its own tier: a person per person, from an address already at its limit; services are not limited", async () => {
    const probe = serve();
    for (let n = 0; n < 2; n++) await probe.read("203.0.113.7");
    expect(await probe.read("203.0.113.7")).toMatchObject({ status: 429 });
    for (let n = 0; n < 3; n++) expect(await probe.read("203.0.113.7", user("usr_ada1"))).toBeUndefined();
    const over = await probe.read("203.0.113.7", user("usr_ada1"));
    expect(over?.extensions).toMatchObject({ rule: "probe.read.person" });
    expect(await probe.read("203.0.113.7", user("usr_bob1"))).toBeUndefined();
    const service: TokenClaims = { kind: "service", svc: "web", caps: [] };
    for (let n = 0; n < 10; n++) expect(await probe.read("203.0.113.7", service)).toBeUndefined();
  });

  it("start again with the next minute, and take their numbers from the settings they name", async () => {
    const probe = serve(OPEN_READ, { PF_PROBE_ANONYMOUS_READS_PER_MINUTE: "1" });
    expect(await probe.read("203.0.113.7")).toBeUndefined();
    for (let n = 0; n < 5; n++) expect(await probe.read("203.0.113.7")).toMatchObject({ status: 429 });
    probe.clock.advance(30_000);
    // The new window's one call passes, the next is refused.
    expect(await probe.read("203.0.113.7")).toBeUndefined();
    expect(await probe.read("203.0.113.7")).toMatchObject({ status: 429 });
    expect(probe.handled()).toBe(2);
  });

  it("count no anonymous call without a client address (between services in process)", async () => {
    const probe = serve();
    for (let n = 0; n < 5; n++) expect(await probe.read()).toBeUndefined();
  });

  it("apply the limit of the rule that admitted the call: a rule naming none is not counted", async () => {
    const probe = serve({ visibility: Visibility.PUBLIC, anonymous: true });
    for (let n = 0; n < 5; n++) expect(await probe.read("203.0.113.7")).toBeUndefined();
  });

  it("refuse to start on a rule naming a limit its service does not declare, or a tier without its setting", () => {
    const clock = new ManualClock();
    expect(() => new RateLimits([probeWith({ ...OPEN_READ, rateLimit: "write" })], {}, clientKeys, clock)).toThrow(
      /does not declare/,
    );
    const unnamed = probeWith(OPEN_READ, [{ name: "read", anonymous: { perMinute: 5 } }]);
    expect(() => new RateLimits([unnamed], {}, clientKeys, clock)).toThrow(/setting/);
  });
});

describe("every public read", () => {
  const services = modules.flatMap((module) => module.protos);

  it("declares an anonymous rate limit on the rule that admits anonymous callers (every GET route open to them)", () => {
    const undeclared: string[] = [];
    for (const service of services) {
      for (const method of service.methods) {
        const open = routeAccessOf(method).rules.find(admitsAnonymous);
        if (!open || getOption(method, http).pattern.case !== "get") continue;
        if (!declaredRateLimit(method, open)?.anonymous) undeclared.push(`${service.typeName}.${method.name}`);
      }
    }
    expect(undeclared).toEqual([]);
  });

  it("names limits every service declares, alike where two services of one key declare one", () => {
    expect(() => new RateLimits(services, {}, clientKeys, new ManualClock())).not.toThrow();
  });
});
