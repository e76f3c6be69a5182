import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import {
  ServerReflection,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { onPublicSurface } from "../../services/kit/rpc/surface.js";
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
  /** What one reflection stream answers to each request, in order. */
  const reflect = async (token: string | undefined, ...requests: ServerReflectionRequest["messageRequest"][]) => {
    const client = createClient(ServerReflection, createGrpcTransport({ baseUrl: t.platform.rpcUrl }));
    async function* ask() {
      for (const messageRequest of requests) yield { host: "", messageRequest };
    }
    const headers = token === undefined ? undefined : { authorization: `Bearer ${token}` };
    const answers: ServerReflectionResponse["messageResponse"][] = [];
    for await (const res of client.serverReflectionInfo(ask(), { headers })) answers.push(res.messageResponse);
    return answers;
  };
  /** The services listed, and the methods of NetworkService as its file describes it. */
  const discovered = async (token?: string) => {
    const [listed, file] = await reflect(
      token,
      { case: "listServices", value: "" },
      { case: "fileContainingSymbol", value: NetworkService.typeName },
    );
    if (listed.case !== "listServicesResponse" || file.case !== "fileDescriptorResponse") throw new Error("no answer");
    const network = fromBinary(FileDescriptorProtoSchema, file.value.fileDescriptorProto[0]);
    return {
      services: listed.value.service.map((s) => s.name),
      methods: network.service.flatMap((s) => s.method.map((m) => m.name)),
    };
  };
  const open = NetworkService.methods.filter(onPublicSurface).map((m) => m.name);

  it("shows service tokens everything, and everyone else the public and first-party surface", async () => {
    const whole = await discovered(await t.token({ kind: "service", svc: "tools" }));
    expect(whole.services).toContain(NetworkService.typeName);
    expect(whole.methods).toEqual(NetworkService.methods.map((m) => m.name));
    expect(whole.methods).toContain("CreditCoins");
    for (const token of [
      undefined,
      await t.token({ kind: "user", sub: "usr_a1" }),
      await t.token({ kind: "app", app_id: "a1", fp: true }),
      await t.token({ kind: "service", svc: "tools", mod: "m1" }),
    ]) {
      const seen = await discovered(token);
      expect(seen.services).toContain(NetworkService.typeName);
      expect(seen.methods).toEqual(open);
      expect(seen.methods).not.toContain("CreditCoins");
    }
    expect(open.length).toBeGreaterThan(0);
    expect(open.length).toBeLessThan(NetworkService.methods.length);
  });

  it("answers nothing of an internal RPC to those who may not discover it", async () => {
    const [symbol] = await reflect(undefined, {
      case: "fileContainingSymbol",
      value: `${NetworkService.typeName}.CreditCoins`,
    });
    expect(symbol).toMatchObject({ case: "errorResponse", value: { errorCode: 5 } });
  });

  it("refuses a token that is not valid, as every route does", async () => {
    const refused = await reflect("not.a.token", { case: "listServices", value: "" }).catch((error: unknown) =>
      ConnectError.from(error),
    );
    expect(refused).toMatchObject({ code: Code.Unauthenticated });
    expect((refused as ConnectError).rawMessage).toMatch(/not valid/);
  });
});
