import { fromJsonString, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { GoalChangedSchema, InteractionChangedSchema } from "../../../gen/pf/tips/v1/events_pb.js";
import { OverlayConfigChangedSchema, OverlayTokenRevokedSchema } from "../../../gen/pf/tips/v1/overlay_events_pb.js";
import type { OverlayConfig } from "../../../gen/pf/tips/v1/overlays_pb.js";
import type { Goal } from "../../../gen/pf/tips/v1/goals_pb.js";
import type { Interaction } from "../../../gen/pf/tips/v1/interactions_pb.js";
import type { BusMessage } from "../../kit/events/bus.js";
import { subjects } from "../events.js";

/** A bus event an overlay stream reacts to, with the event id it is sent under. */
export type LiveEvent = { id: string; creator: string; occurredAt?: Timestamp } & (
  | { kind: "config"; config: OverlayConfig }
  | { kind: "revoked"; tokenId: string }
  | { kind: "settled" | "hidden" | "restored"; interaction: Interaction }
  | { kind: "goal"; goal: Goal }
);

const decoder = new TextDecoder();

function read<Desc extends DescMessage>(desc: Desc, message: BusMessage): MessageShape<Desc> {
  // Newer producers may add fields this reader does not know yet.
  return fromJsonString(desc, decoder.decode(message.data), { ignoreUnknownFields: true });
}

const INTERACTION_KINDS = {
  [subjects.interactionSettled]: "settled",
  [subjects.interactionHidden]: "hidden",
  [subjects.interactionRestored]: "restored",
} as const;

/** The event a bus message carries, or undefined for one without an id or a subject streams ignore. */
export function decodeLive(message: BusMessage): LiveEvent | undefined {
  const id = message.headers["Nats-Msg-Id"];
  if (!id) return undefined;
  switch (message.subject) {
    case subjects.configChanged: {
      const { config, occurredAt } = read(OverlayConfigChangedSchema, message);
      return config && { id, creator: config.creator, occurredAt, kind: "config", config };
    }
    case subjects.tokenRevoked: {
      const { tokenId, creator, occurredAt } = read(OverlayTokenRevokedSchema, message);
      return { id, creator, occurredAt, kind: "revoked", tokenId };
    }
    case subjects.goalChanged: {
      const { goal, occurredAt } = read(GoalChangedSchema, message);
      return goal && { id, creator: goal.creator, occurredAt, kind: "goal", goal };
    }
    case subjects.interactionSettled:
    case subjects.interactionHidden:
    case subjects.interactionRestored: {
      const { interaction, occurredAt } = read(InteractionChangedSchema, message);
      return (
        interaction && {
          id,
          creator: interaction.creator,
          occurredAt,
          kind: INTERACTION_KINDS[message.subject],
          interaction,
        }
      );
    }
  }
  return undefined;
}
