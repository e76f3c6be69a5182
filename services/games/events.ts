import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ModEventSchema } from "../../gen/pf/games/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";
import type { ModInstallRow } from "./db/entities.js";
import { activeCapabilities, type Action, type Status } from "./domain/installs.js";
import { statusToProto } from "./domain/vocabulary.js";

/**
 * The spec's games.mod.* subjects, one per manage action: exactly one token
 * after `games.mod.`, so a subscriber on `games.mod.*` sees every one.
 */
export const subjects: Record<Action, string> = {
  installed: "games.mod.installed",
  enabled: "games.mod.enabled",
  disabled: "games.mod.disabled",
  granted: "games.mod.granted",
  ungranted: "games.mod.ungranted",
  revoked: "games.mod.revoked",
};

/** What the event says beyond the install as it stands after the action. */
export interface ModEventFacts {
  action: Action;
  actor: string;
  capability?: string;
  reason?: string;
  at: Date;
}

/** games.mod.<action> for an install as the action left it, in the transaction of the change (the outbox). */
export function modChanged(em: EntityManager, install: ModInstallRow, facts: ModEventFacts) {
  return recordEvent(em, subjects[facts.action], ModEventSchema, {
    action: facts.action,
    installId: install.id,
    revision: install.revision,
    modId: install.modId,
    name: install.name,
    version: install.version,
    game: install.game,
    server: install.server,
    status: statusToProto(install.status),
    requestedCapabilities: install.requested,
    grantedCapabilities: install.granted,
    activeCapabilities: activeCapabilities(install.status as Status, install.granted),
    capability: facts.capability ?? "",
    contentDigest: install.contentDigest,
    contentSize: install.contentSize,
    contentPath: `/api/v1/mods/${install.id}`,
    actor: facts.actor,
    reason: facts.reason ?? "",
    at: timestampFromDate(facts.at),
  });
}
