import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { openEventStream } from "../support/sse.js";
import { creatorId, mintOverlayToken, streamUrl } from "./overlay-support.js";
import { describeWith, NATS } from "../support/skips.js";

/**
 * Two tips instances on one database and one NATS: a change made through one
 * instance reaches an overlay streaming from the other (the streams listen on
 * the bus, not in process). Needs NATS (CI always has it).
 */
describeWith(NATS, "overlay streams across instances", () => {
  let a: TestPlatform;
  let b: TestPlatform;
  beforeAll(async () => {
    a = await startTestPlatform({ services: ["tips"] });
    b = await startTestPlatform({
      services: ["tips"],
      env: { DATABASE_URL: a.platform.databaseUrl, PF_NATS_NAMESPACE: a.events!.namespace },
    });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it("a PATCH through one instance reaches a stream on the other at once, and a revoke there ends it", async () => {
    const creator = creatorId();
    const user = await a.token({ kind: "user", sub: creator });
    const config = (
      await a.http("POST", "/tips/api/v1/overlay-configs", {
        token: user,
        body: { kind: "OVERLAY_KIND_ALERTS", name: "A" },
      })
    ).body.config;
    const { id, secret } = await mintOverlayToken(a, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const stream = (await openEventStream(streamUrl(b, secret))).stream!;
    expect((await stream.next())?.event).toBe("opened");
    expect((await stream.next())?.data.config.id).toBe(config.id);

    await a.http("PATCH", `/tips/api/v1/overlay-configs/${config.id}`, { token: user, body: { name: "Renamed on A" } });
    expect(await stream.next(3000)).toMatchObject({
      event: "config",
      data: { config: { name: "Renamed on A", revision: "2" } },
    });

    await a.http("POST", `/tips/api/v1/overlay-tokens/${id}/revoke`, { token: user });
    expect(await stream.next(3000)).toMatchObject({ event: "error", data: { code: "overlay_token.revoked" } });
    await stream.end(3000);
  });
});
