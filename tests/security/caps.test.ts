import { afterEach, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { openEventStream, type EventStreamReader } from "../support/sse.js";
import { until } from "../support/until.js";
import { creatorId, streamUrl } from "../tips/overlay-support.js";

/**
 * Issue 11, "no caps": one user made 300 overlay tokens, 300 watches and 300
 * goals, and 500 streams on one overlay token were all accepted. The same
 * shape at small settings, over the gateway: each stops at its cap.
 */
const CAP = 4;
const PER_TOKEN = 3;
const PER_ADDRESS = 5;
const t = usePlatform({
  services: ["tips", "deals"],
  env: {
    PF_TIPS_OVERLAY_TOKENS_PER_CREATOR: String(CAP),
    PF_TIPS_GOALS_PER_CREATOR: String(CAP),
    PF_DEALS_WATCHES_PER_PERSON: String(CAP),
    PF_TIPS_STREAMS_PER_TOKEN: String(PER_TOKEN),
    PF_TIPS_STREAMS_PER_ADDRESS: String(PER_ADDRESS),
  },
});

/** `tries` creates in a row by one user; answers their statuses and the first refusal. */
async function createMany(token: string, path: string, body: (i: number) => unknown, tries: number) {
  const statuses: number[] = [];
  let refusal: { code: string; limit: number } | undefined;
  for (let i = 0; i < tries; i++) {
    const answer = await t.http("POST", path, { token, body: body(i) });
    statuses.push(answer.status);
    refusal ??= answer.status === 201 ? undefined : answer.body;
  }
  return { statuses, refusal };
}

const expected = (tries: number) => [...Array(CAP).fill(201), ...Array(tries - CAP).fill(409)];

describe("what one user creates", () => {
  it.each([
    [
      "overlay tokens",
      "overlay_token.limit",
      "/tips/api/v1/overlay-tokens",
      () => ({ scopes: ["OVERLAY_SCOPE_ALERTS"] }),
    ],
    [
      "goals",
      "goal.limit",
      "/tips/api/v1/goals",
      () => ({ title: "Goal", target: { minor_units: 100, currency: "USD" } }),
    ],
    [
      "watches",
      "watch.limit",
      "/deals/api/v1/watches",
      (i: number) => ({ kind: "WATCH_KIND_KEYWORD", keyword: `w${i}` }),
    ],
  ])("%s stop at the cap (409 %s)", async (_what, code, path, body) => {
    const token = await t.token({ kind: "user", sub: creatorId() });
    const { statuses, refusal } = await createMany(token, path, body, CAP + 3);
    expect(statuses).toEqual(expected(CAP + 3));
    expect(refusal).toMatchObject({ code, limit: CAP });
  });
});

describe("streams on one overlay token", () => {
  const open: EventStreamReader[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((stream) => stream.close()));
  });

  async function mint(): Promise<string> {
    const token = await t.token({ kind: "user", sub: creatorId() });
    const minted = await t.http("POST", "/tips/api/v1/overlay-tokens", {
      token,
      body: { scopes: ["OVERLAY_SCOPE_ALERTS"] },
    });
    return minted.body.secret;
  }

  /** Opens `count` streams at once; answers the statuses (the open ones are kept to close). */
  async function openMany(secret: string, count: number): Promise<number[]> {
    const answers = await Promise.all(Array.from({ length: count }, () => openEventStream(streamUrl(t, secret))));
    for (const answer of answers) if (answer.stream) open.push(answer.stream);
    return answers.map((answer) => answer.status);
  }

  it("are accepted up to the cap, then 429 rate.limited with Retry-After; a closed stream frees its slot", async () => {
    const secret = await mint();
    const statuses = await openMany(secret, PER_TOKEN + 5);
    expect(statuses.filter((status) => status === 200)).toHaveLength(PER_TOKEN);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    const refused = await openEventStream(streamUrl(t, secret));
    expect(refused).toMatchObject({ status: 429, problem: { code: "rate.limited", rule: "tips.stream.token" } });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    await open.shift()!.close();
    await until(async () => (await openMany(secret, 1))[0] === 200, 5000);
    expect(await openMany(secret, 1)).toEqual([429]);
  });

  it("from one address are capped across tokens", async () => {
    const secrets = [await mint(), await mint()];
    // One at a time, each once a slot is free (the last test's streams free theirs as the service sees them go).
    const openOne = (secret: string) => until(async () => (await openMany(secret, 1))[0] === 200, 5000);
    for (let i = 0; i < PER_TOKEN; i++) await openOne(secrets[0]);
    for (let i = PER_TOKEN; i < PER_ADDRESS; i++) await openOne(secrets[1]);
    for (const secret of [secrets[1], await mint()]) {
      const refused = await openEventStream(streamUrl(t, secret));
      expect(refused).toMatchObject({ status: 429, problem: { code: "rate.limited", rule: "tips.stream.address" } });
    }
  });
});
