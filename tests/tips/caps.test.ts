import { afterEach, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { openEventStream, type EventStreamReader, type Opened } from "../support/sse.js";
import { until } from "../support/until.js";
import { creatorId, mintOverlayToken, streamUrl } from "./overlay-support.js";
import { as, usd, userToken } from "./support.js";

/**
 * Per-creator caps on what creators make (open goals, live overlay tokens) and
 * per-instance caps on open overlay streams (per token, per client address),
 * at small settings so each is reached in a few calls.
 */
const GOALS = 3;
const TOKENS = 3;
const PER_TOKEN = 2;
const PER_ADDRESS = 3;
const t = usePlatform({
  services: ["tips"],
  env: {
    PF_TIPS_GOALS_PER_CREATOR: String(GOALS),
    PF_TIPS_OVERLAY_TOKENS_PER_CREATOR: String(TOKENS),
    PF_TIPS_STREAMS_PER_TOKEN: String(PER_TOKEN),
    PF_TIPS_STREAMS_PER_ADDRESS: String(PER_ADDRESS),
  },
});

async function creator() {
  const id = creatorId();
  return { id, call: as(t, await userToken(t, id)) };
}

const newGoal = { title: "Mic", target: usd(1000) };
const newToken = { scopes: ["OVERLAY_SCOPE_ALERTS"] };

describe("open goals per creator", () => {
  it("are capped: the next is 409 goal.limit naming the limit; closing one makes room", async () => {
    const { call } = await creator();
    const ids: string[] = [];
    for (let i = 0; i < GOALS; i++) {
      const made = await call("POST", "/goals", newGoal);
      expect(made.status).toBe(201);
      ids.push(made.body.goal.id);
    }
    const refused = await call("POST", "/goals", newGoal);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "goal.limit", limit: GOALS });
    expect(refused.body.detail).toContain(`${GOALS} open goals`);
    expect(refused.body.detail).toContain("close one");

    expect((await call("POST", `/goals/${ids[0]}/close`)).status).toBe(200);
    expect((await call("POST", "/goals", newGoal)).status).toBe(201);
    expect((await call("POST", "/goals", newGoal)).body.code).toBe("goal.limit");
  });

  it("are counted per creator", async () => {
    const [a, b] = [await creator(), await creator()];
    for (let i = 0; i < GOALS; i++) expect((await a.call("POST", "/goals", newGoal)).status).toBe(201);
    expect((await b.call("POST", "/goals", newGoal)).status).toBe(201);
  });

  it("hold under concurrency: parallel creates with one place left make exactly one goal", async () => {
    const { call } = await creator();
    for (let i = 0; i < GOALS - 1; i++) expect((await call("POST", "/goals", newGoal)).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 6 }, () => call("POST", "/goals", newGoal)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });
});

describe("live overlay tokens per creator", () => {
  it("are capped: the next is 409 overlay_token.limit; revoking one makes room", async () => {
    const { call } = await creator();
    const ids: string[] = [];
    for (let i = 0; i < TOKENS; i++) {
      const minted = await call("POST", "/overlay-tokens", newToken);
      expect(minted.status).toBe(201);
      ids.push(minted.body.token.id);
    }
    const refused = await call("POST", "/overlay-tokens", newToken);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "overlay_token.limit", limit: TOKENS });
    expect(refused.body.detail).toContain("revoke one");
    expect(refused.body.secret).toBeUndefined();

    expect((await call("POST", `/overlay-tokens/${ids[0]}/revoke`)).status).toBe(200);
    expect((await call("POST", "/overlay-tokens", newToken)).status).toBe(201);
    expect((await call("POST", "/overlay-tokens", newToken)).body.code).toBe("overlay_token.limit");
  });

  it("hold under concurrency: parallel mints with one place left mint exactly one token", async () => {
    const { call } = await creator();
    for (let i = 0; i < TOKENS - 1; i++) expect((await call("POST", "/overlay-tokens", newToken)).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 6 }, () => call("POST", "/overlay-tokens", newToken)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });
});

describe("open overlay streams", () => {
  // Every stream of this file comes from one address: each test closes what it opened, and waits for the slots.
  const open: EventStreamReader[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((stream) => stream.close()));
  });

  /** A token of a fresh creator (so the creators' token cap never interferes). */
  const mint = () => mintOverlayToken(t, creatorId(), ["OVERLAY_SCOPE_ALERTS"]);

  /** Opens a stream once a slot is free (a closed stream's slot frees when the service notices the client left). */
  async function opened(secret: string): Promise<EventStreamReader> {
    let answer: Opened | undefined;
    await until(async () => {
      answer = await openEventStream(streamUrl(t, secret));
      return answer.status === 200;
    }, 5000);
    const stream = answer!.stream!;
    open.push(stream);
    expect((await stream.next())?.event).toBe("opened");
    return stream;
  }

  it("per token: past the cap 429 rate.limited with Retry-After; a closed stream frees its slot", async () => {
    const { secret } = await mint();
    for (let i = 0; i < PER_TOKEN; i++) await opened(secret);
    const refused = await openEventStream(streamUrl(t, secret));
    expect(refused.status).toBe(429);
    expect(refused.problem).toMatchObject({ code: "rate.limited", rule: "tips.stream.token" });
    expect(refused.problem.retry_after_seconds).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get("retry-after")).toBe(String(refused.problem.retry_after_seconds));

    // Another token has its own slots.
    await opened((await mint()).secret);

    await open.shift()!.close();
    await opened(secret);
  });

  it("per client address: past the cap 429 even on fresh tokens, until one closes", async () => {
    for (let i = 0; i < PER_ADDRESS; i++) await opened((await mint()).secret);
    const refused = await openEventStream(streamUrl(t, (await mint()).secret));
    expect(refused.status).toBe(429);
    expect(refused.problem).toMatchObject({ code: "rate.limited", rule: "tips.stream.address" });

    await open.pop()!.close();
    await opened((await mint()).secret);
  });

  it("a refused stream takes no slot, and streams a revocation ends free theirs", async () => {
    const creator = creatorId();
    const { id, secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    for (let i = 0; i < PER_TOKEN + 2; i++)
      expect((await openEventStream(streamUrl(t, "ovk_unknown"))).status).toBe(401);
    for (let i = 0; i < PER_TOKEN; i++) await opened(secret);
    expect((await openEventStream(streamUrl(t, secret))).status).toBe(429);
    const revoked = await as(t, await userToken(t, creator))("POST", `/overlay-tokens/${id}/revoke`);
    expect(revoked.status).toBe(200);
    await Promise.all(open.map((stream) => stream.end()));
    // The address's slots are free again: a full set on another token opens.
    const next = await mint();
    for (let i = 0; i < PER_TOKEN; i++) await opened(next.secret);
  });
});
