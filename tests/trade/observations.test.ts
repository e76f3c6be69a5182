import { ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { TradeService } from "../../gen/pf/trade/v1/trade_pb.js";
import { qualified } from "../../services/kit/db/orm.js";
import { problemOf } from "../../services/kit/handler/problem.js";
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

  it("racing writers of one reference in two series (another unit): exactly one wins; identical racers replay it", async () => {
    for (let round = 0; round < 3; round++) {
      const body = observationBody(symbol, "7", `2026-12-04T10:0${round}:00Z`);
      // Another unit is another series: no series lock orders them, only the unique (source_key, source_ref).
      const answers = await Promise.all(["USD", "EUR", "GBP"].map((unit) => record({ ...body, unit, currency: unit })));
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409]);
      const winner = answers.find((answer) => answer.status === 201)!.body.observation;
      for (const lost of answers.filter((answer) => answer.status === 409)) {
        expect(lost.body).toMatchObject({ code: "observation.conflict", observation: { id: winner.id } });
      }
    }
    const same = observationBody(symbol, "8.10", "2026-12-04T11:00:00Z");
    const answers = await Promise.all([1, 2, 3].map(() => record(same)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(answers.map((answer) => answer.body.observation.id)).size).toBe(1);
    expect(answers.every((answer) => answer.body.observation.value === "8.10")).toBe(true);
  });

  it("over gRPC too: a missing or impossible time is 400 naming it, never defaulted and never a 500", async () => {
    const client = t.client(TradeService, web);
    const base = {
      symbol,
      metric: "price",
      value: "1",
      unit: "USD",
      sourceKey: "grpc-feed",
      sourceRef: `grpc-${Date.now()}`,
      observedAt: { seconds: 1_795_000_000n, nanos: 0 },
      retrievedAt: { seconds: 1_795_000_000n, nanos: 0 },
    };
    const refusal = async (request: Omit<typeof base, "observedAt" | "retrievedAt"> & Partial<typeof base>) => {
      const refused = await client.recordObservation(request).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConnectError);
      const { status, code, extensions } = problemOf(refused);
      return `${status} ${code} ${JSON.stringify(extensions?.field)}`;
    };
    expect(await refusal({ ...base, observedAt: undefined })).toBe('400 request.invalid "observed_at"');
    expect(await refusal({ ...base, retrievedAt: undefined })).toBe('400 request.invalid "retrieved_at"');
    expect(await refusal({ ...base, observedAt: { seconds: 10n ** 15n, nanos: 0 } })).toBe(
      '400 request.invalid "observed_at"',
    );
    expect(await refusal({ ...base, retrievedAt: { seconds: 0n, nanos: -1 } })).toBe(
      '400 request.invalid "retrieved_at"',
    );
  });

  it("people and apps are refused (services only)", async () => {
    const body = observationBody(symbol, "1", "2026-12-01T10:00:00Z");
    const user = await t.token({ kind: "user", sub: "usr_editor1" });
    expect((await record(body, user)).body).toMatchObject({ status: 403, code: "auth.people_refused" });
    const app = await t.token({ kind: "app", app_id: "app1", caps: ALL_TRADE, fp: true });
    expect((await record(body, app)).body).toMatchObject({ status: 403, code: "auth.never_to_apps" });
  });
});
