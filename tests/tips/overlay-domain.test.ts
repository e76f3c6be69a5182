import { create, fromJson, type DescMethod, type JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  AlertSettingsSchema,
  GoalSettingsSchema,
  GoalStyle,
  OverlayScope,
  TipsOverlayService,
} from "../../gen/pf/tips/v1/overlays_pb.js";
import { InteractionKind, InteractionSchema, PaymentState } from "../../gen/pf/tips/v1/interactions_pb.js";
import { TextToSpeechSchema } from "../../gen/pf/tips/v1/profiles_pb.js";
import { alertSettings, goalSettings } from "../../services/tips/domain/overlay-configs.js";
import { alertOf, isAlert, resumePoint, showsConfig, speaks } from "../../services/tips/domain/overlay-stream.js";
import { secretHash } from "../../services/kit/auth/secrets.js";
import { requestedScopes } from "../../services/tips/domain/overlay-tokens.js";
import { inputFaults } from "../../services/kit/rpc/input.js";

/** The fields and rules the contract refuses in a request (given as proto JSON). */
const refused = (method: DescMethod, json: JsonObject) =>
  inputFaults(method, fromJson(method.input, json)).map(({ field, rule }) => `${field} ${rule}`);

describe("overlay rules", () => {
  it("fill alert defaults and keep what was set", () => {
    expect(alertSettings(create(AlertSettingsSchema)).durationMs).toBe(8000);
    expect(alertSettings(create(AlertSettingsSchema, { durationMs: 60_000, soundVolume: 100 })).durationMs).toBe(
      60_000,
    );
    const alerts = (settings: JsonObject) =>
      refused(TipsOverlayService.method.createOverlayConfig, {
        kind: "OVERLAY_KIND_ALERTS",
        name: "a",
        alerts: settings,
      });
    expect(alerts({ duration_ms: 0, sound_volume: 100, template: "x".repeat(200) })).toEqual([]);
    expect(alerts({ duration_ms: 60_001, sound_volume: 101, template: "x".repeat(201) })).toEqual([
      "alerts.duration_ms int32.gte_lte",
      "alerts.sound_volume int32.gte_lte",
      "alerts.template string.max_len",
    ]);
    expect(refused(TipsOverlayService.method.createOverlayConfig, { kind: "OVERLAY_KIND_GOALS", goals: {} })).toEqual([
      "goals.goal_id required",
    ]);
    expect(goalSettings(create(GoalSettingsSchema, { goalId: "gol_1" })).style).toBe(GoalStyle.BAR);
  });

  it("show an interaction as an alert once paid (settled or external) and while not hidden", () => {
    const paid = create(InteractionSchema, {
      id: "int_1",
      paymentState: PaymentState.SETTLED,
      transactionId: "txn_secret",
    });
    expect(isAlert(paid)).toBe(true);
    expect(isAlert({ ...paid, paymentState: PaymentState.EXTERNAL })).toBe(true);
    expect(isAlert({ ...paid, paymentState: PaymentState.PENDING })).toBe(false);
    expect(isAlert({ ...paid, hidden: true })).toBe(false);
    expect(JSON.stringify(alertOf(paid), (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(
      "txn_secret",
    );
  });

  it("read a paid message aloud when the creator's text-to-speech is on and it pays at least the minimum, in its currency", () => {
    const message = create(InteractionSchema, {
      kind: InteractionKind.PAID_MESSAGE,
      message: "hi",
      amount: { minorUnits: 500n, currency: "USD" },
    });
    const on = create(TextToSpeechSchema, {
      enabled: true,
      voice: "alto",
      minimum: { minorUnits: 500n, currency: "USD" },
    });
    expect(speaks(on, message)).toBe(true);
    expect(alertOf(message, on)).toMatchObject({ speak: true, voice: "alto" });
    expect(speaks(undefined, message)).toBe(false);
    expect(speaks({ ...on, enabled: false }, message)).toBe(false);
    expect(
      speaks({ ...on, minimum: undefined }, {
        ...message,
        amount: { minorUnits: 1n, currency: "EUR" },
      } as typeof message),
    ).toBe(true);
    expect(speaks(on, { ...message, amount: { minorUnits: 499n, currency: "USD" } } as typeof message)).toBe(false);
    expect(speaks(on, { ...message, amount: { minorUnits: 900n, currency: "EUR" } } as typeof message)).toBe(false);
    expect(speaks(on, { ...message, message: "" })).toBe(false);
    expect(speaks(on, { ...message, kind: InteractionKind.TIP })).toBe(false);
    expect(alertOf({ ...message, kind: InteractionKind.TIP }, on)).toMatchObject({ speak: false, voice: "" });
  });

  it("resume only from one of our event ids", () => {
    expect(resumePoint("evt_01jd0000000000000000000000")).toBe("evt_01jd0000000000000000000000");
    expect(resumePoint("42")).toBeUndefined();
    expect(resumePoint(null)).toBeUndefined();
  });

  it("show a config of the stream's scopes, or only the one asked for", () => {
    expect(showsConfig(new Set(["alerts"]), "", { id: "ovc_1", kind: "alerts" })).toBe(true);
    expect(showsConfig(new Set(["alerts"]), "", { id: "ovc_1", kind: "goals" })).toBe(false);
    expect(showsConfig(new Set(["alerts"]), "ovc_2", { id: "ovc_1", kind: "alerts" })).toBe(false);
  });

  it("take scopes once each, at least one; hash secrets with SHA-256", () => {
    expect([...requestedScopes([OverlayScope.GOALS, OverlayScope.GOALS])]).toEqual(["goals"]);
    const { createOverlayToken } = TipsOverlayService.method;
    expect(refused(createOverlayToken, {})).toEqual(["scopes required"]);
    expect(refused(createOverlayToken, { scopes: ["OVERLAY_SCOPE_UNSPECIFIED", 7] })).toEqual([
      "scopes[0] enum.not_in",
      "scopes[1] enum.defined_only",
    ]);
    expect(secretHash("ovk_a")).toMatch(/^[0-9a-f]{64}$/);
  });
});
