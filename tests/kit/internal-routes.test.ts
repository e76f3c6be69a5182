import type { DescMethod } from "@bufbuild/protobuf";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { beforeAll, describe, expect, it } from "vitest";
import { bindingsOf } from "../../gateway/bindings.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { Visibility } from "../../gen/pf/v1/options_pb.js";
import { modules } from "../../platform/registry.js";
import {
  capabilitiesOf,
  expectedRefusal,
  routesOf,
  serviceClaims,
  statusOf,
  type Route,
  servicesOf,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";

/**
 * Internal is "service-to-service only; never granted to apps or mods": every
 * RPC of every service with an internal rule refuses a service token carrying
 * a mod claim (403 auth.never_to_mods), even holding the route's capabilities,
 * through the gateway and directly on the RPC port alike. The matrix is built
 * from the access options of the services the registry lists.
 */
const t = usePlatform();

const MOD = "mod_1";
let rpc: Transport;
beforeAll(() => {
  rpc = createConnectTransport({ baseUrl: t.platform.rpcUrl, httpVersion: "2" });
});

const internal = (route: Route) => route.rules.some((rule) => rule.visibility === Visibility.INTERNAL);

/** A mod's service token holding what the route's internal rules ask (the named service where one is required). */
function modToken(route: Route) {
  const caps = route.rules.filter((rule) => rule.visibility === Visibility.INTERNAL).flatMap(capabilitiesOf);
  return serviceClaims(route, { caps: [...new Set(caps)], mod: MOD });
}

/** The problem code the gateway answers for the route's first binding, its path variables filled. */
async function overHttp(key: string, method: DescMethod, token: string): Promise<string> {
  const [binding] = bindingsOf(method.parent).filter((b) => b.method === method);
  if (!binding) return "(no HTTP binding)";
  const path = binding.template.segments
    .map((segment) => (segment.kind === "literal" ? segment.text : "usr_a1"))
    .join("/");
  const answer = await t.http(binding.verb, `/${key}/${path}`, { token, body: binding.body === "" ? undefined : {} });
  return `${answer.status} ${answer.body?.code ?? ""}`;
}

/** The problem code the RPC port answers (Connect over HTTP/2, the whole interceptor chain). */
async function overRpc(method: DescMethod, token: string): Promise<string> {
  const client = createClient(method.parent, rpc) as unknown as Record<
    string,
    (request: object, options: object) => unknown
  >;
  try {
    const answer = client[method.localName]({}, { headers: { authorization: `Bearer ${token}` } });
    if (method.methodKind === "server_streaming")
      await (answer as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
    else await answer;
    return "200 ";
  } catch (error) {
    const [problem] = ConnectError.from(error).findDetails(ProblemSchema);
    return `${problem?.status ?? "?"} ${problem?.code ?? String(error)}`;
  }
}

describe.each(modules.map((module) => module.key))("every internal RPC of %s", (key) => {
  it("refuses a mod's service token holding its capabilities (403 auth.never_to_mods), over HTTP and RPC", async () => {
    const routes = routesOf(...servicesOf(key)).filter(internal);
    const wrong: string[] = [];
    for (const route of routes) {
      const claims = modToken(route);
      const expected = expectedRefusal(route, { claims });
      // Only an internal rule lets the token in by its capabilities; were another rule to admit a mod, say so here.
      expect(expected, `${route.name}: a rule other than internal admits a mod`).toBeDefined();
      if (route.rules.at(-1)!.visibility === Visibility.INTERNAL)
        expect(expected, route.name).toBe("auth.never_to_mods");
      const want = `${statusOf(expected!)} ${String(expected)}`;
      const token = await t.token(claims);
      const name = `${route.method.parent.name}.${route.method.name}`;
      const [http, direct] = [await overHttp(key, route.method, token), await overRpc(route.method, token)];
      if (http !== want && http !== "(no HTTP binding)") wrong.push(`${name} over HTTP: ${http}`);
      if (direct !== want) wrong.push(`${name} over RPC: ${direct}`);
    }
    expect(wrong).toEqual([]);
  });
});

it("covers every internal RPC the services declare, those the issue found open among them", () => {
  const covered = modules.flatMap((module) =>
    routesOf(...servicesOf(module.key))
      .filter(internal)
      .map((route) => `${route.method.parent.name}.${route.method.name}`),
  );
  expect(covered).toEqual(
    expect.arrayContaining([
      "BillingAdminService.GetFreeze",
      "BillingService.GetBalance",
      "NetworkService.CreditCoins",
      "NetworkService.PushNotification",
      "TipsService.RecordExternal",
      "TipsService.HideInteraction",
      "TipsService.RestoreInteraction",
      "TipsService.ListModerationQueue",
    ]),
  );
});
