import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { as, deliver, fund, newKey, person, setProfile, testProvider, TIPS_ENV, usd, userToken } from "./support.js";

const t = usePlatform({ services: ["tips", "billing"], env: TIPS_ENV });

describe("interaction history", () => {
  it("shows the creator what they received and the supporter what they made, with payment and delivery state apart; others 404", async () => {
    const [creator, supporter] = [person("cre"), person("sup")];
    await setProfile(t, creator);
    await fund(t, supporter, 1000n);
    const supporterCall = as(t, await userToken(t, supporter));
    const creatorCall = as(t, await userToken(t, creator));
    const credit = await supporterCall(
      "POST",
      "/checkout",
      { creator, amount: usd(100) },
      { "idempotency-key": newKey() },
    );
    const pending = await supporterCall(
      "POST",
      "/checkout",
      { creator, amount: usd(200), payment_method: "PAYMENT_METHOD_INTENT" },
      { "idempotency-key": newKey() },
    );

    const received = await creatorCall("GET", "/interactions?role=INTERACTION_ROLE_CREATOR");
    expect(
      received.body.interactions.map((i: { id: string; payment_state: string; delivery_state: string }) => [
        i.id,
        i.payment_state,
        i.delivery_state,
      ]),
    ).toEqual([
      [pending.body.checkout.id, "PAYMENT_STATE_PENDING", "DELIVERY_STATE_PENDING"],
      [credit.body.checkout.id, "PAYMENT_STATE_SETTLED", "DELIVERY_STATE_DELIVERED"],
    ]);
    expect((await creatorCall("GET", "/interactions?role=INTERACTION_ROLE_SUPPORTER")).body.interactions ?? []).toEqual(
      [],
    );
    const made = await supporterCall("GET", "/interactions?limit=1");
    expect(made.body.interactions.map((i: { id: string }) => i.id)).toEqual([pending.body.checkout.id]);
    const next = await supporterCall("GET", `/interactions?limit=1&cursor=${made.body.next_cursor}`);
    expect(next.body.interactions.map((i: { id: string }) => i.id)).toEqual([credit.body.checkout.id]);
    expect(next.body.next_cursor ?? "").toBe("");

    expect((await creatorCall("GET", `/interactions/${credit.body.checkout.id}`)).body.interaction.supporter).toBe(
      supporter,
    );
    expect((await supporterCall("GET", `/interactions/${credit.body.checkout.id}`)).status).toBe(200);
    const other = as(t, await userToken(t, person("oth")));
    expect((await other("GET", `/interactions/${credit.body.checkout.id}`)).body).toMatchObject({
      status: 404,
      code: "interaction.not_found",
    });
    expect((await other("GET", "/interactions")).body.interactions ?? []).toEqual([]);
    expect((await supporterCall("GET", "/interactions?limit=500")).body).toMatchObject({ status: 400, field: "limit" });
  });
});

describe("list reads", () => {
  it("refuse a cursor they did not issue and an unknown role (400 naming the field), never 500", async () => {
    const creator = person("cre");
    const call = as(t, await userToken(t, creator));
    const relay = await t.token({ kind: "service", svc: "chat", caps: ["tips.interaction.moderate"] });
    const forged = (position: unknown) => Buffer.from(JSON.stringify(position)).toString("base64url");
    for (const cursor of [forged(["not a time", "int_1"]), forged([{}, 1]), forged([])]) {
      expect((await call("GET", `/queue?cursor=${cursor}`)).body).toMatchObject({
        status: 400,
        code: "request.invalid",
        field: "cursor",
      });
    }
    for (const cursor of [forged([{ a: 1 }]), forged([]), forged([7])]) {
      expect((await call("GET", `/interactions?cursor=${cursor}`)).body).toMatchObject({
        status: 400,
        field: "cursor",
      });
      const log = await t.http("GET", `/tips/api/v1/moderation/log?creator=${creator}&cursor=${cursor}`, {
        token: relay,
        headers: { "x-pf-subject": creator },
      });
      expect(log.body).toMatchObject({ status: 400, field: "cursor" });
    }
    expect((await call("GET", "/interactions?role=7")).body).toMatchObject({
      status: 400,
      code: "request.invalid",
      field: "role",
    });
  });

  it("take a limit of 1 to 200 (default 50): limit=0 is 400 naming limit, never read as unset", async () => {
    const call = as(t, await userToken(t, person("sup")));
    for (const path of ["/interactions?limit=0", "/queue?limit=0"]) {
      expect((await call("GET", path)).body, path).toMatchObject({
        status: 400,
        code: "request.invalid",
        field: "limit",
      });
    }
    expect((await call("GET", "/interactions")).status).toBe(200);
  });
});

describe("media requests", () => {
  async function scene() {
    const [creator, supporter] = [person("cre"), person("sup")];
    await setProfile(t, creator, {
      media_requests: { enabled: true, allowed_hosts: ["youtube.com"], minimum: usd(300), max_seconds: 600 },
    });
    await fund(t, supporter, 5000n);
    return {
      creator,
      supporter,
      supporterCall: as(t, await userToken(t, supporter)),
      creatorCall: as(t, await userToken(t, creator)),
    };
  }
  const media = (creator: string, fields: Record<string, unknown> = {}) => ({
    creator,
    amount: usd(300),
    media_url: "https://www.youtube.com/watch?v=abc",
    media_seconds: 120,
    ...fields,
  });

  it("are refused for a host not allowed, over the maximum length or under the creator's minimum (422)", async () => {
    const { creator, supporterCall } = await scene();
    const send = (fields: Record<string, unknown>) =>
      supporterCall("POST", "/media-requests", media(creator, fields), { "idempotency-key": newKey() });
    expect((await send({ media_url: "https://evil.example/v.mp4" })).body).toMatchObject({
      status: 422,
      code: "tips.media_host_not_allowed",
      field: "media_url",
    });
    expect((await send({ media_seconds: 601 })).body).toMatchObject({
      status: 422,
      code: "tips.media_too_long",
      field: "media_seconds",
    });
    expect((await send({ amount: usd(299) })).body).toMatchObject({ status: 422, code: "tips.below_minimum" });
    expect((await send({ media_url: "ftp://youtube.com/x" })).body).toMatchObject({ status: 400, field: "media_url" });
    expect((await send({ media_seconds: 0 })).body).toMatchObject({ status: 400, field: "media_seconds" });
    expect(
      (await supporterCall("POST", "/checkout", media(creator), { "idempotency-key": newKey() })).body,
    ).toMatchObject({ status: 400, field: "media_url" });
    await setProfile(t, creator, { media_requests: { enabled: false } });
    expect((await send({})).body).toMatchObject({ status: 409, code: "tips.media_requests_off" });
  });

  it("enter the creator's queue only after settlement, oldest first", async () => {
    const { creator, supporterCall, creatorCall } = await scene();
    const paid = await supporterCall("POST", "/media-requests", media(creator), { "idempotency-key": newKey() });
    expect(paid.status).toBe(201);
    expect(paid.body.interaction).toMatchObject({
      kind: "INTERACTION_KIND_MEDIA_REQUEST",
      payment_state: "PAYMENT_STATE_SETTLED",
      delivery_state: "DELIVERY_STATE_QUEUED",
      media_seconds: 120,
    });
    const waiting = await supporterCall(
      "POST",
      "/media-requests",
      media(creator, { payment_method: "PAYMENT_METHOD_INTENT" }),
      { "idempotency-key": newKey() },
    );
    expect(waiting.body.interaction.delivery_state).toBe("DELIVERY_STATE_PENDING");
    const queue = await creatorCall("GET", "/queue");
    expect(queue.body.requests.map((r: { id: string }) => r.id)).toEqual([paid.body.interaction.id]);

    const order = new URL(waiting.body.checkout.checkout_url).searchParams.get("order")!;
    const provider = testProvider(t);
    await provider.approve(order);
    await provider.captureOrder(order);
    await deliver(
      t,
      (await provider.deliveries(order)).find((d) => d.type === "payment.captured")!,
    );
    await expect
      .poll(async () => (await creatorCall("GET", "/queue")).body.requests.map((r: { id: string }) => r.id), {
        timeout: 10_000,
        interval: 100,
      })
      .toEqual([paid.body.interaction.id, waiting.body.interaction.id]);
    expect((await supporterCall("GET", "/queue")).body.requests ?? []).toEqual([]);
  });
});
