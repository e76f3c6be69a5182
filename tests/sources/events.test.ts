import { DeliverPolicy, jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { NATS, describeWith } from "../support/skips.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { addItem, ALL_SOURCES, caller, manualSource, QUIET_WORKERS } from "./support.js";

describeWith(NATS, "sources events on NATS", () => {
  let nc: NatsConnection;
  let t: TestPlatform;
  let call: ReturnType<typeof caller>;
  const received: { subject: string; body: any }[] = [];
  let stop: () => void;

  beforeAll(async () => {
    nc = await connect({ servers: process.env.NATS_URL });
    t = await startTestPlatform({ services: ["sources"], env: QUIET_WORKERS });
    const news = await t.token({ kind: "service", svc: "news", caps: ALL_SOURCES });
    call = caller(t, () => news);
    const consumer = await jetstream(nc).consumers.get(t.events!.stream("sources"), {
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: new Date().toISOString(),
    });
    const messages = await consumer.consume();
    stop = () => void messages.stop();
    const prefix = t.events!.subject("");
    void (async () => {
      for await (const message of messages)
        received.push({ subject: message.subject.slice(prefix.length), body: message.json() });
    })();
  });
  afterAll(async () => {
    stop?.();
    await t?.stop();
    await nc?.close();
  });

  it("an item created, revised and removed reaches a consumer in that order, change orders increasing", async () => {
    const key = await manualSource(call);
    const evidence = { evidence_url: "https://evidence.example.com/order", title: "First" };
    const [created] = await addItem(call, key, { ...evidence, identifiers: { cik: "0000320193" }, filing_type: "8-K" });
    await addItem(call, key, { ...evidence, title: "Second" });
    await call("DELETE", `/items/${created.id}?reason=retracted`);
    const ofItem = () => received.filter((event) => event.body.item_id === created.id);
    await until(() => ofItem().length === 3);
    const events = ofItem();
    expect(events.map((event) => event.subject)).toEqual([
      "sources.item.created",
      "sources.item.revised",
      "sources.item.removed",
    ]);
    expect(events[0].body).toMatchObject({
      item_id: created.id,
      source_key: key,
      canonical_url: "https://evidence.example.com/order",
      revision: 1,
      title: "First",
      identifiers: { cik: "0000320193" },
      filing_type: "8-K",
      content_hash: created.provenance.content_hash,
    });
    expect(events[1].body).toMatchObject({ revision: 2, title: "Second" });
    expect(events[2].body).toMatchObject({ reason: "retracted", source_key: key });
    const orders = events.map((event) => BigInt(event.body.change_order));
    expect(orders[0] < orders[1] && orders[1] < orders[2]).toBe(true);
  });

  it("sources.source.changed tells creation, enabling and disabling with the source (credential by name only)", async () => {
    const key = await manualSource(call);
    await call("PATCH", `/sources/${key}`, { enabled: false });
    const ofSource = () =>
      received.filter((event) => event.subject === "sources.source.changed" && event.body.source.key === key);
    await until(() => ofSource().length === 2);
    expect(ofSource().map((event) => [event.body.change, event.body.source.enabled])).toEqual([
      ["created", true],
      ["disabled", false],
    ]);
  });
});
