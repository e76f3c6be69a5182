import { afterAll, beforeAll, expect, it } from "vitest";
import type { BusMessage } from "../../services/kit/events/bus.js";
import { JetStreamBus } from "../../services/kit/events/jetstream-bus.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { deleteNamespaceStreams, newTestEvents } from "../support/nats.js";
import { describeWith, NATS } from "../support/skips.js";
import { until } from "../support/until.js";

/**
 * Two deployments on one NATS server, each under its own namespace: on the
 * wire every subject is `<namespace>.<subject>`, handlers see the spec's
 * subject, and neither hears the other (live subscriptions with wildcards,
 * durable consumers by their filter).
 */
const natsUrl = process.env.NATS_URL;
const data = new TextEncoder().encode("{}");

describeWith(NATS, "the JetStream bus under a namespace", () => {
  const [one, two] = [newTestEvents(), newTestEvents()];
  let a: JetStreamBus;
  let b: JetStreamBus;
  beforeAll(async () => {
    a = await JetStreamBus.connect(natsUrl!, createLogger("silent"), one.namespace);
    b = await JetStreamBus.connect(natsUrl!, createLogger("silent"), two.namespace);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    for (const events of [one, two]) await deleteNamespaceStreams(natsUrl!, events);
  });

  it("subscribes with wildcards to its own namespace only, handing over the spec's subjects", async () => {
    const [seenA, seenB]: string[][] = [[], []];
    const stops = [
      a.subscribe("nsx.*.done", (m) => void seenA.push(m.subject)),
      b.subscribe(">", (m) => void seenB.push(m.subject)),
    ];
    await a.ensureStream("nsx");
    await a.publish("nsx.job.done", "evt_w1", data, {});
    await a.publish("nsx.job.started", "evt_w2", data, {});
    // Each side's own last event arrives after whatever it would have heard of the ones before.
    await a.publish("nsx.last.done", "evt_w3", data, {});
    await b.ensureStream("nsx");
    await b.publish("nsx.own.done", "evt_w4", data, {});
    await until(() => seenA.includes("nsx.last.done") && seenB.includes("nsx.own.done"));
    stops.forEach((stop) => stop());
    expect(seenA).toEqual(["nsx.job.done", "nsx.last.done"]);
    expect(seenB).toEqual(["nsx.own.done"]);
  });

  it("delivers to a durable consumer only its filter's events, with spec subjects, and never another namespace's", async () => {
    const [gotA, gotB]: BusMessage[][] = [[], []];
    const stopA = await a.consume("nsy.item.made", "nsy-test", "all", async (batch) => void gotA.push(...batch));
    const stopB = await b.consume("nsy.item.made", "nsy-test", "all", async (batch) => void gotB.push(...batch));
    await a.publish("nsy.item.made", "evt_d1", data, { "Pf-Schema": "x@1" });
    await a.publish("nsy.item.gone", "evt_d2", data, {});
    // Each side's own last event arrives after whatever it would have been handed of the ones before.
    await a.publish("nsy.item.made", "evt_d3", data, { "Pf-Schema": "x@2" });
    await b.publish("nsy.item.made", "evt_d4", data, { "Pf-Schema": "own@1" });
    const seen = (got: BusMessage[], schema: string) => got.some((m) => m.headers["Pf-Schema"] === schema);
    await until(() => seen(gotA, "x@2") && seen(gotB, "own@1"));
    await stopA();
    await stopB();
    expect(gotA.map((m) => [m.subject, m.headers["Pf-Schema"]])).toEqual([
      ["nsy.item.made", "x@1"],
      ["nsy.item.made", "x@2"],
    ]);
    expect(gotB.map((m) => [m.subject, m.headers["Pf-Schema"]])).toEqual([["nsy.item.made", "own@1"]]);
  });

  it("makes its streams PF_<NAMESPACE>_<PREFIX> over `<namespace>.<prefix>.>`, deleted with the namespace", async () => {
    await b.ensureStream("nsz");
    const { jetstreamManager } = await import("@nats-io/jetstream");
    const { connect } = await import("@nats-io/transport-node");
    const nc = await connect({ servers: natsUrl });
    try {
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info(two.stream("nsz"));
      expect(info.config.subjects).toEqual([`${two.namespace}.nsz.>`]);
      await deleteNamespaceStreams(natsUrl!, two);
      await expect(jsm.streams.info(two.stream("nsz"))).rejects.toThrow();
      // The other namespace's streams stay.
      expect((await jsm.streams.info(one.stream("nsy"))).config.name).toBe(one.stream("nsy"));
    } finally {
      await nc.close();
    }
  });
});
