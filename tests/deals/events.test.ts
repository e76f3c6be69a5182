import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import { ObservationRow, OfferRow } from "../../services/deals/db/entities.js";
import { notifyWatches } from "../../services/deals/db/observations.js";
import { type StreamMessage, subscribeToStream } from "../support/nats.js";
import { startTestPlatform, usePlatform, type TestPlatform } from "../support/platform.js";
import { ALL_DEALS, dealsOf, person, submit } from "./support.js";
import { NATS, describeWith } from "../support/skips.js";
import { until } from "../support/until.js";

const natsUrl = process.env.NATS_URL;

describeWith(NATS, "deals.watch.matched on NATS", () => {
  let nc: NatsConnection;
  let first: TestPlatform;
  let second: TestPlatform | undefined;
  let received: StreamMessage[] = [];
  let stop: () => void;
  let caughtUp: () => Promise<boolean>;

  beforeAll(async () => {
    nc = await connect({ servers: natsUrl });
    first = await startTestPlatform({ services: ["deals"] });
    ({ received, stop, caughtUp } = await subscribeToStream(nc, first.events!, "deals", "deals.watch.matched"));
  });
  afterAll(async () => {
    stop?.();
    await second?.stop();
    await first?.stop();
    await nc?.close();
  });

  it("a subscriber receives it exactly once per (watch, observation), across a retried observation and a relay restart", async () => {
    const web = await first.token({ kind: "service", svc: "web", caps: ALL_DEALS });
    const owner = person("w");
    const word = `ev${Date.now().toString(36)}`;
    const watch = (
      await first.http("POST", "/deals/api/v1/watches", {
        token: web,
        body: { kind: "WATCH_KIND_KEYWORD", keyword: word },
        headers: { "x-pf-subject": owner },
      })
    ).body.watch;
    const submitted = await submit(first, web, person(), { title: `A ${word}` });
    const [offer, offerObservation] = [submitted.offer, submitted.observation.id];
    const observe = { observation: { availability: "AVAILABILITY_IN_STOCK" }, idempotency_key: "obs-1" };
    const headers = { "x-pf-subject": person() };
    const observed = await first.http("POST", `/deals/api/v1/offers/${offer.id}/observations`, {
      token: web,
      body: observe,
      headers,
    });
    expect(observed.status).toBe(201);
    const mine = () => received.filter((m) => m.body.watch_id === watch.id);
    await until(() => mine().length === 2);
    expect(mine()[0].body).toMatchObject({ owner, kind: "WATCH_KIND_KEYWORD", offer: { id: offer.id } });

    // The same observation retried: answered from the first, no second match.
    const retried = await first.http("POST", `/deals/api/v1/offers/${offer.id}/observations`, {
      token: web,
      body: observe,
      headers,
    });
    expect(retried.body.observation.id).toBe(observed.body.observation.id);

    // The relay stops after publishing but before marking sent (as a crash would), and a new instance relays again.
    const databaseUrl = first.platform.databaseUrl;
    const em = first.platform.contexts.get("deals")!.orm.em;
    await em
      .getConnection()
      .execute(`update ${qualified(em, "outbox")} set sent_at = null where subject = 'deals.watch.matched'`);
    await first.platform.stop();
    second = await startTestPlatform({
      services: ["deals"],
      env: { DATABASE_URL: databaseUrl, PF_NATS_NAMESPACE: first.events!.namespace },
    });
    const ctx = second.platform.contexts.get("deals")!;
    const unsent = async () =>
      (
        await ctx.orm.em
          .getConnection()
          .execute<{ n: string }[]>(
            `select count(*) as n from ${qualified(ctx.orm.em, "outbox")} where sent_at is null`,
          )
      )[0].n;
    await until(async () => (await unsent()) === "0");
    // Everything the stream holds for the subscriber has arrived: a second match would be here.
    await until(caughtUp);

    // Once for the submit's first observation, once for the observation retried: nothing more.
    expect(
      mine()
        .map((m) => m.body.observation.id)
        .sort(),
    ).toEqual([offerObservation, observed.body.observation.id].sort());
    expect(new Set(mine().map((m) => m.id)).size).toBe(2);
  });
});

describe("deals.watch.matched in the outbox", () => {
  const t = usePlatform({ services: ["deals"] });

  it("matching one observation twice writes one event per (watch, observation)", async () => {
    const web = await t.token({ kind: "service", svc: "web", caps: ALL_DEALS });
    const word = `tw${Date.now().toString(36)}`;
    const owners = [person("w"), person("w")];
    const watches: string[] = [];
    for (const owner of owners) {
      const made = await t.http("POST", "/deals/api/v1/watches", {
        token: web,
        body: { kind: "WATCH_KIND_KEYWORD", keyword: word },
        headers: { "x-pf-subject": owner },
      });
      watches.push(made.body.watch.id);
    }
    const submitted = await submit(t, web, person(), { title: `A ${word}` });
    const ctx = dealsOf(t);
    // The submit matched both watches once; the same observation matched again (twice more) notifies none.
    for (let again = 0; again < 2; again++) {
      const notified = await ctx.transaction(async (em) => {
        const offer = await em.findOneOrFail(OfferRow, { id: submitted.offer.id });
        const observation = await em.findOneOrFail(ObservationRow, { id: submitted.observation.id });
        return notifyWatches(em, offer, observation, null, ctx.clock.now());
      });
      expect(notified).toEqual([]);
    }
    const em = ctx.orm.em.fork();
    const events = await em
      .getConnection()
      .execute<{ payload: string }[]>(
        `select payload from ${qualified(em, "outbox")} where subject = 'deals.watch.matched' and payload like ?`,
        [`%${submitted.observation.id}%`],
      );
    const pairs = events.map((row) => JSON.parse(row.payload)).map((body) => `${body.watch_id}/${body.observation.id}`);
    expect(pairs.sort()).toEqual(watches.map((watch) => `${watch}/${submitted.observation.id}`).sort());
    const [{ n }] = await em
      .getConnection()
      .execute<{ n: string }[]>(
        `select count(*) as n from ${qualified(em, "watch_matches")} where observation_id = ?`,
        [submitted.observation.id],
      );
    expect(Number(n)).toBe(2);
  });

  it("a fresh pair of an observation matched again is notified once (a watch made after the first match)", async () => {
    const web = await t.token({ kind: "service", svc: "web", caps: ALL_DEALS });
    const word = `tl${Date.now().toString(36)}`;
    const submitted = await submit(t, web, person(), { title: `B ${word}` });
    const late = (
      await t.http("POST", "/deals/api/v1/watches", {
        token: web,
        body: { kind: "WATCH_KIND_KEYWORD", keyword: word },
        headers: { "x-pf-subject": person("w") },
      })
    ).body.watch.id;
    const ctx = dealsOf(t);
    const rematch = () =>
      ctx.transaction(async (em) => {
        const offer = await em.findOneOrFail(OfferRow, { id: submitted.offer.id });
        const observation = await em.findOneOrFail(ObservationRow, { id: submitted.observation.id });
        return notifyWatches(em, offer, observation, null, ctx.clock.now());
      });
    expect(await rematch()).toEqual([late]);
    expect(await rematch()).toEqual([]);
    const em = ctx.orm.em.fork();
    const [{ n }] = await em
      .getConnection()
      .execute<{ n: string }[]>(
        `select count(*) as n from ${qualified(em, "outbox")} where subject = 'deals.watch.matched' and payload like ? and payload like ?`,
        [`%${late}%`, `%${submitted.observation.id}%`],
      );
    expect(Number(n)).toBe(1);
  });
});
