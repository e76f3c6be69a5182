import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { IntentSchema, IntentStatus } from "../../gen/pf/billing/v1/intents_pb.js";
import { IntentChangedSchema } from "../../gen/pf/billing/v1/events_pb.js";
import { consumers } from "../../services/tips/consumers/intents.js";
import type { TipsContext } from "../../services/tips/context.js";
import { applyIntent } from "../../services/tips/payments.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { as, fund, newKey, person, setProfile, tipsRows, usd, userToken } from "./support.js";

// The recovery worker is driven by hand here (applyIntent is what it runs for an intent billing settled).
const t = usePlatform({
  services: ["tips", "billing"],
  env: { PF_TIPS_RECOVERY_EVERY_MS: "3600000", PF_TIPS_RECOVERY_AFTER_MS: "3600000" },
});

describe("settling one checkout by billing's event and by the recovery worker at once", () => {
  it("makes one interaction, one settled event and counts the goal once", async () => {
    const [creator, supporter] = [person("cre"), person("sup")];
    await setProfile(t, creator);
    const creatorCall = as(t, await userToken(t, creator));
    const goal = (await creatorCall("POST", "/goals", { title: "Cam", target: usd(5000) })).body.goal;
    const answer = await as(t, await userToken(t, supporter))(
      "POST",
      "/paid-messages",
      { creator, amount: usd(500), message: "race", goal_id: goal.id, payment_method: "PAYMENT_METHOD_INTENT" },
      { "idempotency-key": newKey() },
    );
    const { id, intent_id: intentId } = answer.body.checkout;
    const intent = create(IntentSchema, {
      id: intentId,
      status: IntentStatus.SETTLED,
      reference: { service: "tips", kind: "interaction", id },
    });
    const event = create(IntentChangedSchema, { intent, occurredAt: timestampNow() });
    const handler = consumers.find((c) => c.subject === "billing.intent.settled")!;
    const tips = t.platform.contexts.get("tips") as TipsContext;
    await Promise.all([
      ...Array.from({ length: 4 }, (_, i) =>
        tips.transaction((em) => handler.handle(event, em, { id: `evt_race${i}`, subject: handler.subject }, tips)),
      ),
      ...Array.from({ length: 4 }, () => applyIntent(tips, id, intent)),
    ]);
    expect(await tipsRows(t, "interactions", id)).toBe(1);
    expect((await outboxEvents(t, "tips", id)).map((e) => e.subject)).toEqual(["tips.interaction.settled"]);
    expect((await creatorCall("GET", `/goals/${goal.id}`)).body.goal).toMatchObject({
      total: { minor_units: "500" },
      contributions: 1,
    });
    // Created, then one settlement: no goal event per racer.
    expect((await outboxEvents(t, "tips", goal.id)).filter((e) => e.subject === "tips.goal.changed")).toHaveLength(2);
  });
});

describe("hiding and restoring one paid message at once", () => {
  it("leaves a log that alternates and ends in the message's state, with delivery matching it", async () => {
    const [creator, supporter] = [person("cre"), person("sup")];
    await setProfile(t, creator);
    await fund(t, supporter, 1000n);
    const paid = await as(t, await userToken(t, supporter))(
      "POST",
      "/paid-messages",
      { creator, amount: usd(300), message: "hi" },
      { "idempotency-key": newKey() },
    );
    const id = paid.body.interaction.id;
    const relay = await t.token({ kind: "service", svc: "chat", caps: ["tips.interaction.moderate"] });
    const act = (action: string) =>
      t.http("POST", `/tips/api/v1/interactions/${id}/${action}`, {
        token: relay,
        body: {},
        headers: { "x-pf-subject": creator },
      });
    const answers = await Promise.all(
      ["hide", "restore", "hide", "restore", "hide", "hide", "restore", "hide"].map(act),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const log = await t.http("GET", `/tips/api/v1/moderation/log?creator=${creator}`, {
      token: relay,
      headers: { "x-pf-subject": creator },
    });
    const actions = (log.body.log as { action: string }[]).map((r) => r.action).reverse();
    actions.forEach((action, i) =>
      expect(action).toBe(i % 2 === 0 ? "MODERATION_ACTION_HIDE" : "MODERATION_ACTION_RESTORE"),
    );
    const read = (await as(t, await userToken(t, creator))("GET", `/interactions/${id}`)).body.interaction;
    const hidden = actions.at(-1) === "MODERATION_ACTION_HIDE";
    expect(read).toMatchObject({
      hidden,
      delivery_state: hidden ? "DELIVERY_STATE_SUPPRESSED" : "DELIVERY_STATE_DELIVERED",
      payment_state: "PAYMENT_STATE_SETTLED",
    });
    const events = (await outboxEvents(t, "tips", id)).map((e) => e.subject).slice(1);
    expect(events).toEqual(
      actions.map((a) => (a === "MODERATION_ACTION_HIDE" ? "tips.interaction.hidden" : "tips.interaction.restored")),
    );
  });
});
