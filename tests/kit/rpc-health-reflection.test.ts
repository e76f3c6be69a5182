import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { execFile } from "node:child_process";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http } from "../../gen/google/api/annotations_pb.js";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { access } from "../../gen/pf/v1/options_pb.js";
import { testEnforcement } from "../gateway/support.js";
import { until } from "../support/until.js";
import { healthRoutes } from "../../services/kit/rpc/health.js";
import { reflectionRoutes } from "../../services/kit/rpc/reflection.js";
import { onPublicSurface } from "../../services/kit/rpc/surface.js";

const NETWORK = "pf.network.v1.NetworkService";

// Plain grpc-js clients from the .proto sources: nothing shared with the server's generated code.
type Ctor = new (address: string, credentials: grpc.ChannelCredentials) => grpc.Client;
function clientCtor(file: string, path: string[]): Ctor {
  const definition = protoLoader.loadSync(file, {
    includeDirs: ["proto"],
    enums: String,
    oneofs: true,
    defaults: true,
  });
  let node: unknown = grpc.loadPackageDefinition(definition);
  for (const part of path) node = (node as Record<string, unknown>)[part];
  return node as Ctor;
}

interface HealthClient extends grpc.Client {
  Check(req: { service: string }, callback: (err: grpc.ServiceError | null, res?: { status: string }) => void): void;
  Watch(req: { service: string }): grpc.ClientReadableStream<{ status: string }>;
}
interface ReflectionResponse {
  validHost: string;
  messageResponse: "fileDescriptorResponse" | "allExtensionNumbersResponse" | "listServicesResponse" | "errorResponse";
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  allExtensionNumbersResponse?: { baseTypeName: string; extensionNumber: number[] };
  listServicesResponse?: { service: { name: string }[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}
interface ReflectionClient extends grpc.Client {
  ServerReflectionInfo(metadata: grpc.Metadata): grpc.ClientDuplexStream<Record<string, unknown>, ReflectionResponse>;
}

let server: http2.Http2Server;
let url: string;
let health: HealthClient;
let reflection: ReflectionClient;
/** Reflection shows service tokens everything (others see the public surface). */
let serviceToken: string;

beforeAll(async () => {
  const { admission, token } = await testEnforcement();
  serviceToken = await token({ kind: "service", svc: "tools" });
  server = http2.createServer(
    connectNodeAdapter({
      routes: (router) => {
        healthRoutes(router, [NetworkService]);
        reflectionRoutes(router, [NetworkService], admission);
      },
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  url = `http://${address}`;
  const Health = clientCtor("grpc/health/v1/health.proto", ["grpc", "health", "v1", "Health"]);
  const Reflection = clientCtor("grpc/reflection/v1/reflection.proto", [
    "grpc",
    "reflection",
    "v1",
    "ServerReflection",
  ]);
  health = new Health(address, grpc.credentials.createInsecure()) as HealthClient;
  reflection = new Reflection(address, grpc.credentials.createInsecure()) as ReflectionClient;
});

afterAll(async () => {
  health?.close();
  reflection?.close();
  await new Promise((resolve) => server?.close(resolve));
});

function check(service: string): Promise<string> {
  return new Promise((resolve, reject) =>
    health.Check({ service }, (err, res) => (err ? reject(err) : resolve(res!.status))),
  );
}

/** One reflection stream carrying every request in order, as grpcurl and buf curl use it. */
function reflect(...requests: Record<string, unknown>[]): Promise<ReflectionResponse[]> {
  return new Promise((resolve, reject) => {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${serviceToken}`);
    const call = reflection.ServerReflectionInfo(metadata);
    const responses: ReflectionResponse[] = [];
    call.on("data", (res: ReflectionResponse) => responses.push(res));
    call.on("error", reject);
    call.on("end", () => resolve(responses));
    for (const req of requests) call.write({ host: "", ...req });
    call.end();
  });
}

function files(res: ReflectionResponse): FileDescriptorProto[] {
  expect(res.messageResponse).toBe("fileDescriptorResponse");
  return res.fileDescriptorResponse!.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
}

describe("grpc.health.v1.Health", () => {
  it("answers SERVING for the server and each hosted service", async () => {
    expect(await check("")).toBe("SERVING");
    expect(await check(NETWORK)).toBe("SERVING");
  });

  it("answers NOT_FOUND for an unknown service", async () => {
    await expect(check("pf.nope.v1.NopeService")).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it("Watch sends the status once and holds the stream until the client cancels", async () => {
    for (const [service, expected] of [
      [NETWORK, "SERVING"],
      ["pf.nope.v1.NopeService", "SERVICE_UNKNOWN"],
    ]) {
      const call = health.Watch({ service });
      const events: string[] = [];
      call.on("data", (res: { status: string }) => events.push(res.status));
      call.on("end", () => events.push("end"));
      const ended = new Promise<grpc.ServiceError>((resolve) => call.on("error", resolve));
      await until(() => events.length > 0);
      const beforeCancel = [...events];
      call.cancel();
      // Still open when cancelled, and nothing after the status up to then.
      expect((await ended).code).toBe(grpc.status.CANCELLED);
      expect(beforeCancel).toEqual([expected]);
    }
  });
});

describe("grpc.reflection.v1.ServerReflection", () => {
  it("lists the hosted services with health and reflection", async () => {
    const [res] = await reflect({ listServices: "" });
    const names = res.listServicesResponse!.service.map((s) => s.name);
    expect(names.sort()).toEqual(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", NETWORK].sort());
  });

  it("answers a service symbol with its file and the whole import closure, linkable on its own", async () => {
    const [res] = await reflect({ fileContainingSymbol: NETWORK });
    const protos = files(res);
    const names = protos.map((f) => f.name);
    expect(names[0]).toBe("pf/network/v1/network.proto");
    expect(names).toEqual(
      expect.arrayContaining([
        "pf/v1/options.proto",
        "google/api/annotations.proto",
        "google/protobuf/descriptor.proto",
      ]),
    );
    expect(new Set(names).size).toBe(names.length);
    // Linking resolves every import and type reference, as grpcurl and buf curl must.
    const byName = new Map(protos.map((f) => [f.name, f]));
    const registry = createFileRegistry(protos[0], (name) => byName.get(name));
    expect(registry.getService(NETWORK)?.methods.length).toBe(NetworkService.methods.length);
  });

  it("finds methods, messages, nested enums, fields and extensions by full name, and files by name", async () => {
    const responses = await reflect(
      { fileContainingSymbol: `${NETWORK}.${NetworkService.methods[0].name}` },
      { fileContainingSymbol: NetworkService.methods[0].input.typeName },
      { fileContainingSymbol: "grpc.health.v1.HealthCheckResponse.ServingStatus" },
      { fileContainingSymbol: "pf.v1.SubjectRef.id" },
      { fileContainingSymbol: access.typeName },
      { fileByFilename: "google/protobuf/timestamp.proto" },
    );
    expect(responses.map((res) => files(res)[0].name)).toEqual([
      "pf/network/v1/network.proto",
      "pf/network/v1/network.proto",
      "grpc/health/v1/health.proto",
      "pf/v1/refs.proto",
      "pf/v1/options.proto",
      "google/protobuf/timestamp.proto",
    ]);
  });

  it("answers extension questions about the options the services use", async () => {
    const [byNumber, numbers] = await reflect(
      { fileContainingExtension: { containingType: "google.protobuf.MethodOptions", extensionNumber: http.number } },
      { allExtensionNumbersOfType: "google.protobuf.MethodOptions" },
    );
    expect(files(byNumber)[0].name).toBe("google/api/annotations.proto");
    expect(numbers.allExtensionNumbersResponse!.baseTypeName).toBe("google.protobuf.MethodOptions");
    expect(numbers.allExtensionNumbersResponse!.extensionNumber).toEqual(
      expect.arrayContaining([http.number, access.number]),
    );
  });

  it("answers error_response NOT_FOUND for unknown names and keeps the stream usable", async () => {
    const responses = await reflect(
      { fileContainingSymbol: "pf.nope.v1.Nope" },
      { fileByFilename: "pf/nope.proto" },
      { fileContainingExtension: { containingType: "google.protobuf.MethodOptions", extensionNumber: 1 } },
      { allExtensionNumbersOfType: "pf.nope.v1.Nope" },
      {},
      { listServices: "" },
    );
    // NOT_FOUND for names, INVALID_ARGUMENT for a request that asks nothing.
    expect(responses.slice(0, 5).map((res) => res.errorResponse?.errorCode)).toEqual([5, 5, 5, 5, 3]);
    expect(responses[5].messageResponse).toBe("listServicesResponse");
  });
});

describe("buf curl (reflection only, no local schema)", () => {
  // Reflection shows internal RPCs to service tokens only; buf curl sends -H with reflection requests only when told.
  const auth = () => ["-H", `authorization: Bearer ${serviceToken}`, "--reflect-header", "*"];
  const bufCurl = (...args: string[]) =>
    promisify(execFile)("npx", ["buf", "curl", "--protocol", "grpc", "--http2-prior-knowledge", ...auth(), ...args], {
      timeout: 30_000,
    });

  it("calls Health/Check", async () => {
    for (const args of [[], ["-d", JSON.stringify({ service: NETWORK })]]) {
      const { stdout } = await bufCurl(...args, `${url}/grpc.health.v1.Health/Check`);
      expect(JSON.parse(stdout)).toEqual({ status: "SERVING" });
    }
  }, 30_000);

  it("without a token, calls Health/Check and lists the public and first-party surface only", async () => {
    const anonymous = (...args: string[]) =>
      promisify(execFile)("npx", ["buf", "curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], {
        timeout: 30_000,
      });
    const { stdout: checked } = await anonymous(`${url}/grpc.health.v1.Health/Check`);
    expect(JSON.parse(checked)).toEqual({ status: "SERVING" });
    const { stdout } = await anonymous("--list-methods", url);
    const listed = stdout.trim().split("\n");
    const open = NetworkService.methods.filter(onPublicSurface).map((m) => `${NETWORK}/${m.name}`);
    expect(listed.filter((name) => name.startsWith(NETWORK)).sort()).toEqual(open.sort());
    expect(listed).not.toContain(`${NETWORK}/CreditCoins`);
  }, 30_000);

  it("lists every method through the linked descriptors", async () => {
    const { stdout } = await bufCurl("--list-methods", url);
    const listed = stdout.trim().split("\n");
    expect(listed).toEqual(expect.arrayContaining(NetworkService.methods.map((m) => `${NETWORK}/${m.name}`)));
    expect(listed).toContain("grpc.health.v1.Health/Watch");
  }, 30_000);
});
