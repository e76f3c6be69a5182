import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { InteractionKind, InteractionSchema, PaymentState } from "../../gen/pf/tips/v1/interactions_pb.js";
import { interactionChanged, subjects } from "../../services/tips/events.js";
import { usePlatform } from "../support/platform.js";
import { openEventStream, type EventStreamReader } from "../support/sse.js";
import { creatorId, mintOverlayToken, recordExternalTip, streamUrl } from "./overlay-support.js";

/**
 * The overlay stream over real HTTP through the gateway, with real NATS when
 * NATS_URL is set: every live event travels outbox → relay → bus → the
 * instance's subscription → the open stream.
 */
const t = usePlatform({ services: ["tips"] });
/** "At once": well under a second on a quiet machine; the margin is for a loaded CI box. */
const AT_ONCE_MS = 3000;

async function opened(
  secret: string,
  query: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<EventStreamReader> {
  const answer = await openEventStream(streamUrl(t, secret, query), headers);
  expect(answer.status, JSON.stringify(answer.problem)).toBe(200);
  expect(answer.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  return answer.stream!;
}

async function creatorWithAlerts() {
  const creator = creatorId();
  const user = await t.token({ kind: "user", sub: creator });
  const config = (
    await t.http("POST", "/tips/api/v1/overlay-configs", {
      token: user,
      body: { kind: "OVERLAY_KIND_ALERTS", name: "Alerts" },
    })
  ).body.config;
  return { creator, user, config };
}

describe("an open overlay stream", () => {
  it("starts with `opened` and the creator's current configs (no ids), then receives a PATCH at once", async () => {
    const { creator, user, config } = await creatorWithAlerts();
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const stream = await opened(secret);
    expect(await stream.next()).toMatchObject({
      event: "opened",
      data: { opened: { creator, scopes: ["OVERLAY_SCOPE_ALERTS"] } },
    });
    const first = await stream.next();
    expect(first).toMatchObject({ event: "config", data: { config: { id: config.id, revision: "1" } } });
    expect(first?.id).toBeUndefined();

    const started = Date.now();
    const patched = await t.http("PATCH", `/tips/api/v1/overlay-configs/${config.id}`, {
      token: user,
      body: { alerts: { sound_volume: 20 } },
    });
    expect(patched.status).toBe(200);
    const change = await stream.next(AT_ONCE_MS);
    expect(Date.now() - started).toBeLessThan(AT_ONCE_MS);
    expect(change).toMatchObject({
      event: "config",
      data: { config: { id: config.id, revision: "2", alerts: { sound_volume: 20 } } },
    });
    expect(change?.id).toMatch(/^evt_/);
    expect(change?.data.id).toBe(change?.id);

    // A config created later reaches it too.
    const second = await t.http("POST", "/tips/api/v1/overlay-configs", {
      token: user,
      body: { kind: "OVERLAY_KIND_ALERTS", name: "Second" },
    });
    expect(await stream.next(AT_ONCE_MS)).toMatchObject({
      event: "config",
      data: { config: { id: second.body.config.id } },
    });
    await stream.close();
  });

  it("ends at once when its token is revoked (an error event, then the end), and the same token cannot reconnect", async () => {
    const { creator, user } = await creatorWithAlerts();
    const { id, secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const stream = await opened(secret);
    const other = await opened((await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"])).secret);
    await stream.next();
    await stream.next();
    const started = Date.now();
    expect((await t.http("POST", `/tips/api/v1/overlay-tokens/${id}/revoke`, { token: user })).status).toBe(200);
    expect(await stream.next(AT_ONCE_MS)).toMatchObject({
      event: "error",
      data: { status: 401, code: "overlay_token.revoked" },
    });
    await stream.end(AT_ONCE_MS);
    expect(Date.now() - started).toBeLessThan(AT_ONCE_MS);
    const again = await openEventStream(streamUrl(t, secret));
    expect(again.problem).toMatchObject({ status: 401, code: "overlay_token.invalid" });
    // Another token of the same creator keeps its stream.
    expect(other.ended).toBe(false);
    await other.close();
  });

  it("receives an alert for a settled interaction (an external tip recorded through POST /interactions/external), and its removal when hidden", async () => {
    const { creator } = await creatorWithAlerts();
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const stream = await opened(secret);
    await stream.next();
    await stream.next();
    const interaction = await recordExternalTip(t, creator, { minor: 1234, message: "great stream" });
    const alert = await stream.next(AT_ONCE_MS);
    expect(alert).toMatchObject({
      event: "alert",
      data: {
        alert: {
          interaction_id: interaction.id,
          kind: "INTERACTION_KIND_EXTERNAL",
          amount: { minor_units: "1234", currency: "USD" },
          message: "great stream",
        },
      },
    });
    expect(alert?.id).toMatch(/^evt_/);
    // No payment details reach an overlay.
    expect(JSON.stringify(alert?.data)).not.toContain("payment");

    // A hide, as the payments half publishes it (tips.interaction.hidden through the outbox).
    const tips = t.platform.contexts.get("tips")!;
    const hidden = create(InteractionSchema, { id: interaction.id, creator, hidden: true });
    await tips.transaction((em) => interactionChanged(em, subjects.interactionHidden, hidden, tips.clock.now()));
    expect(await stream.next(AT_ONCE_MS)).toMatchObject({
      event: "alert_removed",
      data: { alert_removed: { interaction_id: interaction.id } },
    });
    await stream.close();
  });

  it("marks an alert of a paid message to be read aloud as the creator's tip profile says (text_to_speech on, at least its minimum)", async () => {
    const { creator, user } = await creatorWithAlerts();
    const profile = await t.http("PATCH", `/tips/api/v1/profiles/${creator}`, {
      token: user,
      body: { text_to_speech: { enabled: true, voice: "alto", minimum: { minor_units: "500", currency: "USD" } } },
    });
    expect(profile.status).toBe(200);
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const stream = await opened(secret);
    await stream.next();
    await stream.next();
    // Settlements as the payments half publishes them (tips.interaction.settled through the outbox).
    const tips = t.platform.contexts.get("tips")!;
    const settle = (id: string, minor: bigint) =>
      tips.transaction((em) =>
        interactionChanged(
          em,
          subjects.interactionSettled,
          create(InteractionSchema, {
            id,
            creator,
            kind: InteractionKind.PAID_MESSAGE,
            message: "read me",
            amount: { minorUnits: minor, currency: "USD" },
            paymentState: PaymentState.SETTLED,
          }),
          tips.clock.now(),
        ),
      );
    await settle("int_loud1", 600n);
    expect(await stream.next(AT_ONCE_MS)).toMatchObject({
      event: "alert",
      data: { alert: { interaction_id: "int_loud1", speak: true, voice: "alto" } },
    });
    await settle("int_quiet1", 100n);
    expect(await stream.next(AT_ONCE_MS)).toMatchObject({
      event: "alert",
      data: { alert: { interaction_id: "int_quiet1", speak: false, voice: "" } },
    });
    await stream.close();
  });

  it("of a goals token shows the goal its config names: progress live, no alerts, and nothing of other creators", async () => {
    const creator = creatorId();
    const user = await t.token({ kind: "user", sub: creator });
    const goal = await t.http("POST", "/tips/api/v1/goals", {
      token: user,
      body: { title: "New mic", target: { minor_units: "10000", currency: "USD" } },
    });
    expect(goal.status, JSON.stringify(goal.body)).toBe(201);
    const goalId = goal.body.goal.id;
    await t.http("POST", "/tips/api/v1/overlay-configs", {
      token: user,
      body: { kind: "OVERLAY_KIND_GOALS", name: "Mic", goals: { goal_id: goalId } },
    });
    await t.http("POST", "/tips/api/v1/overlay-configs", {
      token: user,
      body: { kind: "OVERLAY_KIND_ALERTS", name: "Alerts" },
    });
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_GOALS"]);
    const stream = await opened(secret);
    expect(await stream.next()).toMatchObject({
      event: "opened",
      data: { opened: { scopes: ["OVERLAY_SCOPE_GOALS"] } },
    });
    expect(await stream.next()).toMatchObject({ event: "config", data: { config: { kind: "OVERLAY_KIND_GOALS" } } });
    await recordExternalTip(t, creatorId(), { minor: 999 });
    await recordExternalTip(t, creator, { minor: 2500, goalId });
    let progress = await stream.next(AT_ONCE_MS);
    // The goal may also come first from the opening snapshot, when the goal view already had it.
    while (progress?.event === "goal" && progress.data.goal.total?.minor_units !== "2500")
      progress = await stream.next(AT_ONCE_MS);
    expect(progress).toMatchObject({
      event: "goal",
      data: {
        goal: { goal_id: goalId, title: "New mic", total: { minor_units: "2500" }, target: { minor_units: "10000" } },
      },
    });
    await expect(stream.next(500)).rejects.toThrow("no event");
    await stream.close();
  });

  it("asked for one config shows only that config", async () => {
    const { creator, user, config } = await creatorWithAlerts();
    await t.http("POST", "/tips/api/v1/overlay-configs", {
      token: user,
      body: { kind: "OVERLAY_KIND_ALERTS", name: "Other" },
    });
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS", "OVERLAY_SCOPE_GOALS"]);
    const stream = await opened(secret, { config_id: config.id });
    expect(await stream.next()).toMatchObject({
      event: "opened",
      data: { opened: { scopes: ["OVERLAY_SCOPE_ALERTS"] } },
    });
    expect(await stream.next()).toMatchObject({ event: "config", data: { config: { id: config.id } } });
    await expect(stream.next(500)).rejects.toThrow("no event");
    await stream.close();
  });
});
