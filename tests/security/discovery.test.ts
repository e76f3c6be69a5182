import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["network"] });

type Operation = { "x-pf-visibility": string; "x-pf-alternatives"?: { visibility: string }[] };
type Document = { paths: Record<string, Record<string, Operation>> };

const visibilities = (document: Document) =>
  Object.values(document.paths).flatMap((item) =>
    Object.values(item).map((op) => [
      op["x-pf-visibility"],
      ...(op["x-pf-alternatives"] ?? []).map((a) => a.visibility),
    ]),
  );
const opensToPublic = (seen: string[]) => seen.some((each) => each === "public" || each === "first-party");

describe("the OpenAPI documents", () => {
  for (const path of ["/openapi.json", "/network/openapi.json"]) {
    it(`${path}: public and first-party routes to the public and to people, the whole to service tokens`, async () => {
      const user = await t.token({ kind: "user", sub: "usr_a1" });
      const app = await t.token({ kind: "app", app_id: "a1", fp: true });
      const service = await t.token({ kind: "service", svc: "tools" });
      for (const token of [undefined, user, app]) {
        const answer = await t.http("GET", path, { token });
        expect(answer.status).toBe(200);
        expect(answer.headers.get("vary")).toMatch(/authorization/i);
        const seen = visibilities(answer.body as Document);
        expect(seen.length).toBeGreaterThan(0);
        expect(seen.every(opensToPublic), JSON.stringify(seen)).toBe(true);
      }
      const whole = await t.http("GET", path, { token: service });
      expect(visibilities(whole.body as Document).flat()).toContain("internal");
      expect(JSON.stringify(whole.body)).toContain("/internal/coins/credit");
    });
  }

  it("refuses a token that is not valid, as every route does", async () => {
    const answer = await t.http("GET", "/openapi.json", { token: "not.a.token" });
    expect(answer).toMatchObject({ status: 401, body: { code: "auth.invalid" } });
  });
});

describe("RPC reflection", () => {
  const listServices = async (token?: string) => {
    const client = createClient(ServerReflection, createGrpcTransport({ baseUrl: t.platform.rpcUrl }));
    async function* ask() {
      yield { host: "", messageRequest: { case: "listServices" as const, value: "" } };
    }
    const names: string[] = [];
    const headers = token === undefined ? undefined : { authorization: `Bearer ${token}` };
    for await (const res of client.serverReflectionInfo(ask(), { headers })) {
      if (res.messageResponse.case === "listServicesResponse")
        names.push(...res.messageResponse.value.service.map((s) => s.name));
    }
    return names;
  };
  const codeOf = (token?: string) =>
    listServices(token).then(
      () => "answered",
      (error: unknown) => Code[ConnectError.from(error).code],
    );

  it("answers service tokens only", async () => {
    expect(await listServices(await t.token({ kind: "service", svc: "tools" }))).toContain(
      "pf.network.v1.NetworkService",
    );
    expect(await codeOf()).toBe("Unauthenticated");
    expect(await codeOf("not.a.token")).toBe("Unauthenticated");
    expect(await codeOf(await t.token({ kind: "user", sub: "usr_a1" }))).toBe("PermissionDenied");
    expect(await codeOf(await t.token({ kind: "app", app_id: "a1", fp: true }))).toBe("PermissionDenied");
    expect(await codeOf(await t.token({ kind: "service", svc: "tools", mod: "m1" }))).toBe("PermissionDenied");
  });
});
