import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { openEventStream } from "../support/sse.js";
import { until, untilPast } from "../support/until.js";
import { creatorId, mintOverlayToken, recordExternalTip, streamUrl } from "./overlay-support.js";

/**
 * An overlay stream lives far longer than a call's deadline (PF_CALL_TIMEOUT_MS,
 * short here): through the gateway and over the RPC port with a plain gRPC
 * client, it still delivers live alerts after the deadline has long passed.
 */
const CALL_TIMEOUT_MS = 300;
const t = usePlatform({
  services: ["tips"],
  env: { PF_CALL_TIMEOUT_MS: String(CALL_TIMEOUT_MS), PF_TIPS_OVERLAY_RECHECK_MS: "100" },
});
const protoDir = fileURLToPath(new URL("../../proto", import.meta.url));

type ServerStream = (request: object, metadata: grpc.Metadata) => grpc.ClientReadableStream<any>;
let overlays: grpc.Client & Record<string, ServerStream>;

beforeAll(() => {
  const definition = protoLoader.loadSync("pf/tips/v1/overlays.proto", {
    includeDirs: [protoDir],
    longs: String,
    keepCase: true,
    defaults: true,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as any;
  overlays = new loaded.pf.tips.v1.TipsOverlayService(
    new URL(t.platform.rpcUrl).host,
    grpc.credentials.createInsecure(),
  );
});
afterAll(() => overlays?.close());

describe("an overlay stream held open past the call deadline", () => {
  it("through the gateway still receives live alerts", async () => {
    const creator = creatorId();
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const stream = (await openEventStream(streamUrl(t, secret))).stream!;
    expect(await stream.next()).toMatchObject({ event: "opened" });
    await untilPast(Date.now() + CALL_TIMEOUT_MS * 4);
    expect(stream.ended).toBe(false);
    await recordExternalTip(t, creator, { message: "late" });
    expect(await stream.next(3000)).toMatchObject({ event: "alert" });
    await stream.close();
  });

  it("over gRPC (a plain grpc-js client on the RPC port) opens, and still receives live alerts", async () => {
    const creator = creatorId();
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const call = overlays.OpenOverlayStream({ token: secret }, new grpc.Metadata());
    const received: any[] = [];
    let failure: grpc.ServiceError | undefined;
    call.on("data", (message) => received.push(message));
    call.on("error", (error: grpc.ServiceError) => (failure = error));
    await until(() => received.length > 0 || failure !== undefined);
    expect(failure).toBeUndefined();
    expect(received[0]).toMatchObject({ event: "opened" });
    await untilPast(Date.now() + CALL_TIMEOUT_MS * 4);
    expect(failure).toBeUndefined();
    await recordExternalTip(t, creator, { message: "late" });
    await until(() => received.some((m) => m.event === "alert") || failure !== undefined);
    expect(failure).toBeUndefined();
    expect(received.some((m) => m.event === "alert")).toBe(true);
    call.cancel();
  });
});
