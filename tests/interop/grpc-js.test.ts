import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { usePlatform } from "../support/platform.js";

const protoDir = fileURLToPath(new URL("../../proto", import.meta.url));

type Unary = (
  request: object,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null, response: any) => void,
) => void;

const t = usePlatform({ services: ["network"] });
let network: grpc.Client & Record<string, Unary>;

beforeAll(async () => {
  const definition = protoLoader.loadSync("pf/network/v1/network.proto", {
    includeDirs: [protoDir],
    longs: String,
    keepCase: true,
    defaults: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as any;
  network = new loaded.pf.network.v1.NetworkService(new URL(t.platform.rpcUrl).host, grpc.credentials.createInsecure());
});
afterAll(() => network?.close());

const call = (method: string, request: object, token?: string) =>
  new Promise<{ error: grpc.ServiceError | null; response: any }>((resolve) => {
    const metadata = new grpc.Metadata();
    if (token) metadata.set("authorization", `Bearer ${token}`);
    network[method](request, metadata, (error, response) => resolve({ error, response }));
  });

describe("a plain @grpc/grpc-js client over HTTP/2", () => {
  it("calls a network RPC with a service token", async () => {
    const token = await t.token({
      kind: "service",
      svc: "community",
      caps: ["network.coins.credit"],
      app_id: "app_grpc",
    });
    const { error, response } = await call(
      "CreditCoins",
      { subject: "usr_grpc1", amount: "12", idempotency_key: "g1" },
      token,
    );
    expect(error).toBeNull();
    expect(response).toMatchObject({ subject: "usr_grpc1", app_id: "app_grpc", balance: "12" });
  });

  it("is refused a message over the body limit, and without a token before its body is read", async () => {
    const oversize = { subject: "usr_grpc1", amount: "1", idempotency_key: "x".repeat(2 * 1024 * 1024) };
    expect((await call("CreditCoins", oversize)).error?.code).toBe(grpc.status.UNAUTHENTICATED);
    const token = await t.token({
      kind: "service",
      svc: "community",
      caps: ["network.coins.credit"],
      app_id: "app_grpc",
    });
    expect((await call("CreditCoins", oversize, token)).error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it("gets gRPC status codes for refusals", async () => {
    expect((await call("CreditCoins", { subject: "usr_grpc1", amount: "1", idempotency_key: "g2" })).error?.code).toBe(
      grpc.status.UNAUTHENTICATED,
    );
    const user = await t.token({ kind: "user", sub: "usr_grpc1" });
    expect(
      (await call("CreditCoins", { subject: "usr_grpc1", amount: "1", idempotency_key: "g3" }, user)).error?.code,
    ).toBe(grpc.status.PERMISSION_DENIED);
    const service = await t.token({
      kind: "service",
      svc: "community",
      caps: ["network.coins.debit"],
      app_id: "app_grpc",
    });
    const short = await call("DebitCoins", { subject: "usr_grpc1", amount: "100" }, service);
    expect(short.error?.code).toBe(grpc.status.ABORTED);
    expect(short.error?.details).toContain("coin balance is short");
  });
});

describe("the RPC port speaks Connect and gRPC-Web too", () => {
  it.each([
    ["Connect", (baseUrl: string) => createConnectTransport({ baseUrl, httpVersion: "2" })],
    ["gRPC-Web", (baseUrl: string) => createGrpcWebTransport({ baseUrl, httpVersion: "2" })],
  ])("%s over HTTP/2", async (_name, transport) => {
    const token = await t.token({ kind: "service", svc: "space", caps: ["network.staff.read"] });
    const network = createClient(NetworkService, transport(t.platform.rpcUrl));
    await expect(network.listStaff({}, { headers: { authorization: `Bearer ${token}` } })).resolves.toMatchObject({
      staff: [],
    });
    await expect(network.listStaff({})).rejects.toMatchObject({ code: Code.Unauthenticated });
  });
});
