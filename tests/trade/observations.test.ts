import { beforeAll, describe, expect, it } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import { usePlatform } from "../support/platform.js";
import { ALL_TRADE, instrument, observationBody, TRADE_ENV } from "./support.js";

const t = usePlatform({ services: ["trade"], env: TRADE_ENV });
let web: string;
let symbol: string;
const record = (body: unknown, token = web) => t.http("POST", "/trade/api/v1/observations", { token, body });

beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_TRADE });
  symbol = (await instrument(t, web)).symbol;
});

describe("observations, stated exactly", () => {
  it("keeps the value text verbatim and compares it as numeric", async () => {
    const body = observationBody(symbol, "0012.3400", "2026-12-01T10:00:00Z");
    const answer = await record(body);
    expect(answer.status).toBe(201);
    expect(answer.body.observation).toMatchObject({
      symbol,
      metric: "price",
      value: "0012.3400",
      unit: "USD",
      currency: "USD",
      observed_at: "2026-12-01T10:00:00Z",
      retrieved_at: "2026-12-01T12:00:00Z",
      source_key: "test-feed",
      source_ref: body.source_ref,
    });
    expect(answer.body.observation.id).toMatch(/^obs_/);
    const em = t.platform.contexts.get("trade")!.orm.em;
    const [row] = await em
      .getConnection()
      .execute<{ value_text: string; as_text: string }[]>(
        `select value_text, value::text as as_text from ${qualified(em, "observations")} where id = ?`,
        [answer.body.observation.id],
      );
    expect(row).toEqual({ value_text: "0012.3400", as_text: "12.3400" });
  });

  it("keeps digits no float holds", async () => {
    const value = "12345678901234567890.123456789012345678";
    const answer = await record(observationBody(symbol, value, "2026-12-01T10:01:00Z"));
    expect(answer.body.observation.value).toBe(value);
  });

  it("refuses what is not a plain decimal, and missing times, naming the field (never defaulted)", async () => {
    const at = "2026-12-01T10:00:00Z";
    for (const value of ["", "1e5", "1,5", " 1", "NaN", "0x10", "1.2.3", "--1"]) {
      const answer = await record(observationBody(symbol, value, at));
      expect(answer.body, value).toMatchObject({ status: 400, code: "request.invalid", field: "value" });
    }
    const { observed_at: _observed, ...noObserved } = observationBody(symbol, "1", at);
    expect((await record(noObserved)).body).toMatchObject({ status: 400, field: "observed_at" });
    const { retrieved_at: _retrieved, ...noRetrieved } = observationBody(symbol, "1", at);
    expect((await record(noRetrieved)).body).toMatchObject({ status: 400, field: "retrieved_at" });
    for (const [field, extra] of [
      ["metric", { metric: "" }],
      ["metric", { metric: "Price Now" }],
      ["unit", { unit: "" }],
      ["currency", { currency: "usd" }],
      ["source_key", { source_key: "" }],
      ["source_ref", { source_ref: "" }],
      ["symbol", { symbol: "" }],
    ] as const) {
      const answer = await record(observationBody(symbol, "1", at, extra));
      expect(answer.body, field).toMatchObject({ status: 400, code: "request.invalid", field });
    }
    expect((await record(observationBody("NOSUCHX1", "1", at))).body).toMatchObject({
      status: 404,
      code: "instrument.not_found",
    });
  });

  it("an identical replay answers 200 with the first; a different value under the reference is 409 with the existing", async () => {
    const body = observationBody(symbol, "101.5", "2026-12-02T10:00:00Z");
    const first = await record(body);
    expect(first.status).toBe(201);
    // A later retrieval of the same fact is the same statement.
    const replay = await record({ ...body, retrieved_at: "2026-12-02T13:00:00Z" });
    expect(replay.status).toBe(200);
    expect(replay.body.observation).toEqual(first.body.observation);
    for (const change of [{ value: "101.50" }, { observed_at: "2026-12-02T10:00:01Z" }, { unit: "EUR" }]) {
      const conflict = await record({ ...body, ...change });
      expect(conflict.body, JSON.stringify(change)).toMatchObject({
        status: 409,
        code: "observation.conflict",
        observation: { id: first.body.observation.id, value: "101.5" },
      });
    }
  });

  it("two racing writers of different values under one reference: exactly one wins", async () => {
    for (let round = 0; round < 5; round++) {
      const body = observationBody(symbol, "1", `2026-12-03T10:0${round}:00Z`);
      const answers = await Promise.all(["1", "2", "3"].map((value) => record({ ...body, value })));
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([201, 409, 409]);
      const winner = answers.find((answer) => answer.status === 201)!.body.observation;
      for (const lost of answers.filter((answer) => answer.status === 409)) {
        expect(lost.body.observation.id).toBe(winner.id);
      }
    }
  });

  it("people and apps are refused (services only)", async () => {
    const body = observationBody(symbol, "1", "2026-12-01T10:00:00Z");
    const user = await t.token({ kind: "user", sub: "usr_editor1" });
    expect((await record(body, user)).body).toMatchObject({ status: 403, code: "auth.people_refused" });
    const app = await t.token({ kind: "app", app_id: "app1", caps: ALL_TRADE, fp: true });
    expect((await record(body, app)).body).toMatchObject({ status: 403, code: "auth.never_to_apps" });
  });
});
