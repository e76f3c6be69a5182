import { beforeAll, describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { ALL_TRADE, instrument, observationBody, person, TRADE_ENV, tradeCaller } from "./support.js";

const t = usePlatform({ services: ["trade"], env: TRADE_ENV });
let web: string;
let as: ReturnType<typeof tradeCaller>;
const record = (symbol: string, value: string, observedAt: string, extra: Record<string, unknown> = {}) =>
  as("POST", "/observations", undefined, observationBody(symbol, value, observedAt, extra));

beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_TRADE });
  as = tradeCaller(t, () => web);
});

/** A threshold rule on price in USD. */
async function threshold(owner: string, symbol: string, level: string, direction = "DIRECTION_UP") {
  const answer = await as("POST", "/alerts", owner, {
    symbol,
    kind: "ALERT_KIND_THRESHOLD",
    metric: "price",
    unit: "USD",
    currency: "USD",
    level,
    direction,
  });
  expect(answer.status).toBe(201);
  return answer.body.rule;
}

const deliveriesOf = async (owner: string) => (await as("GET", "/alerts/deliveries", owner)).body.deliveries.deliveries;

describe("alert rules", () => {
  it("creates (201), lists its person's only, and refuses fields of another kind naming them", async () => {
    const { symbol } = await instrument(t, web);
    const owner = person("a");
    const rule = await threshold(owner, symbol, "100.50");
    expect(rule).toMatchObject({
      owner,
      symbol,
      kind: "ALERT_KIND_THRESHOLD",
      level: "100.50",
      direction: "DIRECTION_UP",
    });
    expect(rule.id).toMatch(/^alr_/);
    const filing = await as("POST", "/alerts", owner, { symbol, kind: "ALERT_KIND_FILING_TYPE", filing_type: "10-K" });
    expect(filing.body.rule).toMatchObject({ kind: "ALERT_KIND_FILING_TYPE", filing_type: "10-K" });
    const listed = await as("GET", "/alerts", owner);
    expect(listed.body.rules.rules.map((r: { id: string }) => r.id)).toEqual([filing.body.rule.id, rule.id]);
    expect((await as("GET", "/alerts", person("other"))).body.rules.rules).toEqual([]);
    const cases: [Record<string, unknown>, string][] = [
      [{ symbol, kind: "ALERT_KIND_NEW_DOCUMENT", metric: "price" }, "metric"],
      [{ symbol, kind: "ALERT_KIND_FILING_TYPE" }, "filing_type"],
      [{ symbol, kind: "ALERT_KIND_THRESHOLD", metric: "price", unit: "USD", level: "1e3" }, "level"],
      [
        { symbol, kind: "ALERT_KIND_THRESHOLD", metric: "price", unit: "USD", filing_type: "10-K", level: "1" },
        "filing_type",
      ],
      [{ symbol }, "kind"],
      // A value the contract does not know is refused, never read as "either".
      [{ symbol, kind: "ALERT_KIND_THRESHOLD", metric: "price", unit: "USD", level: "1", direction: 99 }, "direction"],
      [{ symbol, kind: "ALERT_KIND_NEW_DOCUMENT", direction: 99 }, "direction"],
      [{ kind: "ALERT_KIND_NEW_DOCUMENT" }, "symbol"],
    ];
    for (const [body, field] of cases) {
      expect((await as("POST", "/alerts", owner, body)).body, JSON.stringify(body)).toMatchObject({
        status: 400,
        code: "request.invalid",
        field,
      });
    }
    expect((await as("GET", "/alerts?cursor=forged", owner)).body).toMatchObject({ status: 400, field: "cursor" });
    expect((await as("GET", "/alerts?limit=0", owner)).body).toMatchObject({ status: 400, field: "limit" });
  });

  it("delete: its person's own rule; another person's answers 404 like a missing one", async () => {
    const { symbol } = await instrument(t, web);
    const owner = person("d");
    const rule = await threshold(owner, symbol, "5");
    expect((await as("DELETE", `/alerts/${rule.id}`, person("x"))).body).toMatchObject({
      status: 404,
      code: "alert.not_found",
    });
    expect((await as("DELETE", `/alerts/${rule.id}`, owner)).body).toEqual({ id: rule.id, deleted: true });
    expect((await as("DELETE", `/alerts/${rule.id}`, owner)).body).toMatchObject({ status: 404 });
  });
});

describe("threshold deliveries", () => {
  it("deliver on a crossing in observed_at order, once per (rule, observation), as trade.alert.triggered to the subject", async () => {
    const { symbol, id: instrumentId } = await instrument(t, web);
    const [up, down, either, other] = [person("u"), person("d"), person("e"), person("o")];
    const upRule = await threshold(up, symbol, "100", "DIRECTION_UP");
    const downRule = await threshold(down, symbol, "100", "DIRECTION_DOWN");
    await threshold(either, symbol, "100", "DIRECTION_EITHER");
    // The first value ever crosses nothing, even above the level.
    await record(symbol, "150", "2026-12-01T10:00:00Z");
    expect(await deliveriesOf(up)).toEqual([]);
    // 150 → 99.99: down and either.
    const fell = await record(symbol, "99.99", "2026-12-01T11:00:00Z");
    expect((await deliveriesOf(down)).map((d: { observation_id: string }) => d.observation_id)).toEqual([
      fell.body.observation.id,
    ]);
    expect(await deliveriesOf(up)).toEqual([]);
    // 99.99 → 100.0 (decimal comparison: at the level counts as above): up and either.
    const rose = await record(symbol, "100.0", "2026-12-01T12:00:00Z");
    const [delivery] = await deliveriesOf(up);
    expect(delivery).toMatchObject({
      rule_id: upRule.id,
      subject: up,
      instrument_id: instrumentId,
      symbol,
      kind: "ALERT_KIND_THRESHOLD",
      observation_id: rose.body.observation.id,
      metric: "price",
      unit: "USD",
      currency: "USD",
      previous_value: "99.99",
      value: "100.0",
      level: "100",
      direction: "DIRECTION_UP",
    });
    expect(await deliveriesOf(either)).toHaveLength(2);
    // A late observation (not the latest by observed_at) crosses nothing, whatever its value.
    await record(symbol, "1", "2026-12-01T11:30:00Z");
    // The same series in another unit or currency is another series.
    await record(symbol, "1", "2026-12-01T13:00:00Z", { unit: "EUR", currency: "EUR" });
    // A replay of the crossing observation delivers nothing again.
    await record(symbol, "100.0", "2026-12-01T12:00:00Z", { source_ref: rose.body.observation.source_ref });
    expect(await deliveriesOf(up)).toHaveLength(1);
    expect(await deliveriesOf(down)).toHaveLength(1);
    expect(await deliveriesOf(either)).toHaveLength(2);
    expect(await deliveriesOf(other)).toEqual([]);
    expect(downRule.id).not.toBe(upRule.id);

    const events = await outboxEvents(t, "trade", delivery.id);
    expect(events).toHaveLength(1);
    expect(events[0].subject).toBe("trade.alert.triggered");
    const payload = JSON.parse(events[0].payload);
    expect(payload).toMatchObject({
      subject: up,
      visibility: "subject",
      delivery: { id: delivery.id, rule_id: upRule.id },
    });
  });

  it("two observations of one series racing: every crossing delivered once, none twice", async () => {
    const { symbol } = await instrument(t, web);
    const owner = person("r");
    await threshold(owner, symbol, "10", "DIRECTION_EITHER");
    await record(symbol, "5", "2026-12-01T00:00:00Z");
    const values = ["15", "5", "15", "5", "15", "5"];
    await Promise.all(values.map((value, i) => record(symbol, value, `2026-12-01T0${i + 1}:00:00Z`)));
    const deliveries = await deliveriesOf(owner);
    const triggers = deliveries.map((d: { observation_id: string }) => d.observation_id);
    expect(new Set(triggers).size).toBe(triggers.length);
    // Each delivery is a real crossing of the value before it by observed_at.
    for (const d of deliveries) expect(d.previous_value === "5").toBe(d.value === "15");
  });
});
