import { create } from "@bufbuild/protobuf";
import {
  OverlayAlertSchema,
  OverlayGoalSchema,
  type OverlayAlert,
  type OverlayGoal,
} from "../../../gen/pf/tips/v1/overlays_pb.js";
import type { Goal } from "../../../gen/pf/tips/v1/goals_pb.js";
import { InteractionKind, PaymentState, type Interaction } from "../../../gen/pf/tips/v1/interactions_pb.js";
import type { TextToSpeech } from "../../../gen/pf/tips/v1/profiles_pb.js";
import type { OverlayKindName } from "./overlay-configs.js";

/** A reconnecting overlay gets back at most this many alerts it missed… */
export const RESUME_LIMIT = 50;
/** …settled within this long before it reconnects (older ones are no news on screen). */
export const RESUME_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Last-Event-ID is resumed from only when it is one of our event ids; anything else resumes nothing. */
export function resumePoint(lastEventId: string | null): string | undefined {
  return lastEventId !== null && /^evt_[0-9a-z]{26}$/.test(lastEventId) ? lastEventId : undefined;
}

/** An interaction is shown as an alert once its payment settled (or an external tip was recorded) and while it is not hidden. */
export function isAlert(interaction: Interaction): boolean {
  const paid = interaction.paymentState === PaymentState.SETTLED || interaction.paymentState === PaymentState.EXTERNAL;
  return paid && !interaction.hidden;
}

/**
 * Whether the creator's text-to-speech reads an alert aloud: on, a paid
 * message with a message, paying at least the minimum (in its currency) when
 * there is one.
 */
export function speaks(tts: TextToSpeech | undefined, interaction: Interaction): boolean {
  if (!tts?.enabled || interaction.kind !== InteractionKind.PAID_MESSAGE || interaction.message === "") return false;
  if (!tts.minimum) return true;
  return (
    interaction.amount?.currency === tts.minimum.currency && interaction.amount.minorUnits >= tts.minimum.minorUnits
  );
}

/** What an overlay shows of an interaction (no payment details), and whether the creator's text-to-speech reads it. */
export function alertOf(interaction: Interaction, tts?: TextToSpeech): OverlayAlert {
  const speak = speaks(tts, interaction);
  return create(OverlayAlertSchema, {
    speak,
    voice: speak ? tts!.voice : "",
    interactionId: interaction.id,
    kind: interaction.kind,
    supporter: interaction.supporter,
    amount: interaction.amount,
    message: interaction.message,
    goalId: interaction.goalId,
    settledAt: interaction.settledAt,
  });
}

export function goalOf(goal: Goal): OverlayGoal {
  return create(OverlayGoalSchema, {
    goalId: goal.id,
    title: goal.title,
    target: goal.target,
    total: goal.total,
    closed: goal.closed,
  });
}

/** Which configs a stream shows: those of the token's scopes, or just the one it asked for. */
export function showsConfig(
  scopes: ReadonlySet<OverlayKindName>,
  onlyConfig: string,
  config: { id: string; kind: OverlayKindName },
): boolean {
  return scopes.has(config.kind) && (onlyConfig === "" || onlyConfig === config.id);
}
