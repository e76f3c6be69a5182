import { beforeAll, describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { as, balanceReader, fund, newKey, person, setProfile, usd, userToken } from "./support.js";

const t = usePlatform({ services: ["tips", "billing"] });
let relay: string;
let balances: Awaited<ReturnType<typeof balanceReader>>;

beforeAll(async () => {
  relay = await t.token({ kind: "service", svc: "chat", caps: ["tips.interaction.moderate"] });
  balances = await balanceReader(t);
});

/** A service relaying a person's moderation action (X-PF-Subject). */
const moderate = (actor: string | undefined, method: string, path: string, body?: unknown) =>
  t.http(method, `/tips/api/v1${path}`, { token: relay, body, headers: actor ? { "x-pf-subject": actor } : {} });

async function scene() {
  const [creator, moderator, supporter] = [person("cre"), person("mod"), person("sup")];
  await setProfile(t, creator, { moderators: { subjects: [moderator] }, word_filter: { words: ["badword"] } });
  await fund(t, supporter, 5000n);
  const creatorCall = as(t, await userToken(t, creator));
  const goal = (await creatorCall("POST", "/goals", { title: "Mic", target: usd(5000) })).body.goal;
  const supporterCall = as(t, await userToken(t, supporter));
  const message = async (text: string) => {
    const answer = await supporterCall(
      "POST",
      "/paid-messages",
      { creator, amount: usd(500), message: text, goal_id: goal.id },
      { "idempotency-key": newKey() },
    );
    expect(answer.status).toBe(201);
    return answer.body.interaction;
  };
  return { creator, moderator, supporter, goal, creatorCall, message };
}

describe("hiding and restoring a paid message", () => {
  it("by the creator: hidden, suppressed, logged and published; money and goal totals untouched", async () => {
    const { creator, supporter, goal, creatorCall, message } = await scene();
    const paid = await message("hello");
    const before = [await balances(creator), await balances(supporter)];
    const hidden = await moderate(creator, "POST", `/interactions/${paid.id}/hide`, { reason: "spoiler" });
    expect(hidden.status).toBe(200);
    expect(hidden.body.interaction).toMatchObject({
      id: paid.id,
      hidden: true,
      moderation: "MODERATION_STATE_HIDDEN",
      delivery_state: "DELIVERY_STATE_SUPPRESSED",
      payment_state: "PAYMENT_STATE_SETTLED",
    });
    expect(hidden.body.record).toMatchObject({
      interaction_id: paid.id,
      creator,
      action: "MODERATION_ACTION_HIDE",
      actor: creator,
      relayed_by: "svc:chat",
      reason: "spoiler",
    });
    expect([await balances(creator), await balances(supporter)]).toEqual(before);
    expect((await creatorCall("GET", `/goals/${goal.id}`)).body.goal.total.minor_units).toBe("500");
    expect((await outboxEvents(t, "tips", paid.id)).map((e) => e.subject)).toEqual([
      "tips.interaction.settled",
      "tips.interaction.hidden",
    ]);

    const again = await moderate(creator, "POST", `/interactions/${paid.id}/hide`, { reason: "twice" });
    expect(again.body.record).toBeUndefined();
    expect(again.body.interaction.hidden).toBe(true);
  });

  it("by one of the creator's moderators; restore shows it again", async () => {
    const { moderator, creatorCall, message } = await scene();
    const paid = await message("hello");
    expect((await moderate(moderator, "POST", `/interactions/${paid.id}/hide`, { reason: "spam" })).status).toBe(200);
    const restored = await moderate(moderator, "POST", `/interactions/${paid.id}/restore`, { reason: "fine" });
    expect(restored.body.interaction).toMatchObject({
      hidden: false,
      moderation: "MODERATION_STATE_VISIBLE",
      delivery_state: "DELIVERY_STATE_DELIVERED",
    });
    expect(restored.body.record).toMatchObject({ action: "MODERATION_ACTION_RESTORE", actor: moderator });
    expect((await outboxEvents(t, "tips", paid.id)).map((e) => e.subject)).toEqual([
      "tips.interaction.settled",
      "tips.interaction.hidden",
      "tips.interaction.restored",
    ]);
    expect((await creatorCall("GET", `/interactions/${paid.id}`)).body.interaction.hidden).toBe(false);
  });

  it("by anyone else answers 404 as if missing (another creator's moderator too), changing nothing; a service acting for nobody is 403 auth.person_required; people's own tokens never (internal)", async () => {
    const { supporter, message } = await scene();
    const paid = await message("hello");
    const other = await scene();
    for (const stranger of [person("oth"), supporter, other.creator, other.moderator]) {
      expect((await moderate(stranger, "POST", `/interactions/${paid.id}/hide`, {})).body).toMatchObject({
        status: 404,
        code: "interaction.not_found",
      });
      expect((await moderate(stranger, "POST", `/interactions/${paid.id}/restore`, {})).body).toMatchObject({
        status: 404,
        code: "interaction.not_found",
      });
    }
    expect((await outboxEvents(t, "tips", paid.id)).map((e) => e.subject)).toEqual(["tips.interaction.settled"]);
    expect((await moderate(undefined, "POST", `/interactions/${paid.id}/hide`, {})).body).toMatchObject({
      status: 403,
      code: "auth.person_required",
    });
    const own = await t.http("POST", `/tips/api/v1/interactions/${paid.id}/hide`, {
      token: await userToken(t, supporter),
      body: {},
    });
    expect(own.body).toMatchObject({ status: 403, code: "auth.internal_only" });
  });

  it("applies to paid messages only: a tip or an unknown id answers 404", async () => {
    const { creator, supporter } = await scene();
    const tip = await as(t, await userToken(t, supporter))(
      "POST",
      "/checkout",
      { creator, amount: usd(100), message: "tip" },
      { "idempotency-key": newKey() },
    );
    expect((await moderate(creator, "POST", `/interactions/${tip.body.interaction.id}/hide`, {})).body).toMatchObject({
      status: 404,
      code: "interaction.not_found",
    });
    expect((await moderate(creator, "POST", "/interactions/int_nope/hide", {})).body).toMatchObject({
      status: 404,
      code: "interaction.not_found",
    });
  });
});

describe("the word filter", () => {
  it("holds a matching paid message at settlement (settled, hidden) until restored; queue and log show it", async () => {
    const { creator, moderator, goal, creatorCall, message } = await scene();
    const held = await message("this has BADWORD in it");
    expect(held).toMatchObject({
      payment_state: "PAYMENT_STATE_SETTLED",
      hidden: true,
      moderation: "MODERATION_STATE_HELD",
      delivery_state: "DELIVERY_STATE_SUPPRESSED",
    });
    const clean = await message("badwords are not a whole word match");
    expect(clean.hidden).toBe(false);
    expect((await creatorCall("GET", `/goals/${goal.id}`)).body.goal.total.minor_units).toBe("1000");

    const queue = await moderate(moderator, "GET", `/moderation?creator=${creator}`);
    expect(queue.status).toBe(200);
    expect(queue.body.queue.map((i: { id: string }) => i.id)).toEqual([held.id]);
    const restored = await moderate(creator, "POST", `/interactions/${held.id}/restore`, { reason: "context" });
    expect(restored.body.interaction).toMatchObject({
      hidden: false,
      moderation: "MODERATION_STATE_VISIBLE",
      delivery_state: "DELIVERY_STATE_DELIVERED",
    });
    expect((await moderate(creator, "GET", `/moderation?creator=${creator}`)).body.queue ?? []).toEqual([]);

    const log = await moderate(moderator, "GET", `/moderation/log?creator=${creator}`);
    expect(
      log.body.log.map((r: { action: string; actor: string; reason: string }) => [r.action, r.actor, r.reason]),
    ).toEqual([
      ["MODERATION_ACTION_RESTORE", creator, "context"],
      ["MODERATION_ACTION_HOLD", "word_filter", "word filter"],
    ]);
    expect(log.body.log[0].created_at).toBeTruthy();
  });
});

describe("the review queue and the moderation log", () => {
  it("are read by the creator or a moderator only, for one creator, paged", async () => {
    const { creator, message } = await scene();
    const [a, b] = [await message("one"), await message("two")];
    await moderate(creator, "POST", `/interactions/${a.id}/hide`, { reason: "1" });
    await moderate(creator, "POST", `/interactions/${b.id}/hide`, { reason: "2" });
    const first = await moderate(creator, "GET", `/moderation?creator=${creator}&limit=1`);
    expect(first.body.queue.map((i: { id: string }) => i.id)).toEqual([b.id]);
    const second = await moderate(
      creator,
      "GET",
      `/moderation?creator=${creator}&limit=1&cursor=${first.body.next_cursor}`,
    );
    expect(second.body.queue.map((i: { id: string }) => i.id)).toEqual([a.id]);
    expect((await moderate(person("oth"), "GET", `/moderation?creator=${creator}`)).body).toMatchObject({
      status: 403,
      code: "tips.not_moderator",
    });
    expect((await moderate(person("oth"), "GET", `/moderation/log?creator=${creator}`)).body).toMatchObject({
      status: 403,
      code: "tips.not_moderator",
    });
    expect((await moderate(creator, "GET", "/moderation")).body).toMatchObject({ status: 400, field: "creator" });
    expect((await moderate(creator, "GET", `/moderation?creator=${creator}&id=int_1`)).body).toMatchObject({
      status: 400,
      field: "id",
    });
  });
});
