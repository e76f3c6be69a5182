import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";
import { holdCoinAccount } from "../support/row-lock.js";
import { accepts } from "../support/ports.js";
import { until } from "../support/until.js";
import { describe, expect } from "vitest";
import { DATABASE_SERVER, itWith } from "../support/skips.js";
import { startTestPlatform } from "../support/platform.js";

const protoDir = fileURLToPath(new URL("../../proto", import.meta.url));

describe("stopping the host", () => {
  // A row held from another session needs a database server: the embedded one is a single session.
  itWith(
    DATABASE_SERVER,
    "lets a gRPC call being served finish and answer before the connections and the database close",
    async () => {
      const t = await startTestPlatform({ services: ["network"] });
      const definition = protoLoader.loadSync("pf/network/v1/network.proto", {
        includeDirs: [protoDir],
        longs: String,
        keepCase: true,
      });
      const loaded = grpc.loadPackageDefinition(definition) as any;
      const network = new loaded.pf.network.v1.NetworkService(
        new URL(t.platform.rpcUrl).host,
        grpc.credentials.createInsecure(),
      );
      const token = await t.token({
        kind: "service",
        svc: "community",
        caps: ["network.coins.credit"],
        app_id: "app_stop",
      });
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${token}`);
      const credit = (key: string) =>
        new Promise<{ error: grpc.ServiceError | null; response: any }>((resolve) =>
          network.CreditCoins(
            { subject: "usr_stop1", amount: "5", idempotency_key: key },
            metadata,
            (error: grpc.ServiceError | null, response: any) => resolve({ error, response }),
          ),
        );
      expect((await credit("k0")).error).toBeNull();

      // Hold the account's row so the next credit waits inside its transaction.
      const held = await holdCoinAccount(t.platform.databaseUrl, "app_stop", "usr_stop1");
      const waiting = credit("k1");
      await held.queued();
      const stopping = t.stop();
      // Stopping has begun once the RPC server takes no new connection; the call being served still runs.
      await until(async () => !(await accepts(t.platform.rpcUrl)));
      await held.release();

      const answer = await waiting;
      await stopping;
      network.close();
      expect(answer.error).toBeNull();
      expect(answer.response).toMatchObject({ balance: "10" });
    },
  );
});

describe("stopping the gateway", () => {
  // A row held from another session needs a database server: the embedded one is a single session.
  itWith(DATABASE_SERVER, "answers the request being served and does not wait out keep-alive sockets", async () => {
    const t = await startTestPlatform({ services: ["network"] });
    const token = await t.token({
      kind: "service",
      svc: "community",
      caps: ["network.coins.credit"],
      app_id: "app_gw",
    });
    const credit = (key: string) =>
      t.http("POST", "/network/internal/coins/credit", {
        token,
        body: { subject: "usr_gw1", amount: 2, idempotency_key: key },
      });
    expect((await credit("g0")).status).toBe(200);
    const held = await holdCoinAccount(t.platform.databaseUrl, "app_gw", "usr_gw1");
    const waiting = credit("g1");
    await held.queued();
    const started = Date.now();
    const stopping = t.stop();
    await until(async () => !(await accepts(t.gatewayUrl)));
    await held.release();
    const answer = await waiting;
    await stopping;
    expect(answer.status).toBe(200);
    expect(answer.body.balance).toBe("4");
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
