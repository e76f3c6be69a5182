import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotificationPushedSchema, SubjectChangedSchema } from "../../gen/pf/network/v1/events_pb.js";
import { qualified } from "../../services/kit/db/orm.js";
import { recordEvent } from "../../services/kit/events/outbox.js";
import type { ServiceContext } from "../../services/kit/service/module.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";

/** An event's time is the change's: the kit fills `occurred_at` from the time the helper passes. */
describe("recordEvent and occurred_at", () => {
  let t: TestPlatform;
  let ctx: ServiceContext;
  beforeAll(async () => {
    t = await startTestPlatform({ services: ["network"], env: { NATS_URL: "" } });
    ctx = t.platform.contexts.get("network")!;
  });
  afterAll(() => t?.stop());

  const payloadOf = async (id: string) => {
    const [row] = await ctx.orm.em
      .fork()
      .getConnection()
      .execute<{ payload: string }[]>(`select payload from ${qualified(ctx.orm.em, "outbox")} where id = ?`, [id]);
    return row && (JSON.parse(row.payload) as Record<string, unknown>);
  };
  const subject = { id: "usr_time" };
  const at = new Date("2026-03-04T05:06:07.089Z");

  it("fills an unset occurred_at with the change's time", async () => {
    const id = await ctx.transaction((em) =>
      recordEvent(em, "network.subject.changed", SubjectChangedSchema, { subject }, at),
    );
    expect((await payloadOf(id))?.occurred_at).toBe("2026-03-04T05:06:07.089Z");
  });

  it("keeps the occurred_at an event sets itself", async () => {
    const own = timestampFromDate(new Date("2026-01-01T00:00:00Z"));
    const id = await ctx.transaction((em) =>
      recordEvent(em, "network.subject.changed", SubjectChangedSchema, { subject, occurredAt: own }, at),
    );
    expect((await payloadOf(id))?.occurred_at).toBe("2026-01-01T00:00:00Z");
  });

  it("takes a ready message as well as its fields", async () => {
    const id = await ctx.transaction((em) =>
      recordEvent(em, "network.subject.changed", SubjectChangedSchema, create(SubjectChangedSchema, { subject }), at),
    );
    expect((await payloadOf(id))?.occurred_at).toBe("2026-03-04T05:06:07.089Z");
  });

  it("fails the change when an event with occurred_at has no time, or a time has no field", async () => {
    await expect(
      ctx.transaction((em) => recordEvent(em, "network.subject.changed", SubjectChangedSchema, { subject })),
    ).rejects.toThrow(/occurred_at/);
    await expect(
      ctx.transaction((em) =>
        recordEvent(em, "network.notification.pushed", NotificationPushedSchema, { notification: {} }, at),
      ),
    ).rejects.toThrow(/occurred_at/);
  });
});
