import { PerkKind, PerkStatus } from "../../../gen/pf/vip/v1/plans_pb.js";
import type { EntityRef } from "../../../gen/pf/v1/refs_pb.js";
import { invalid } from "../../kit/handler/problem.js";

export type Kind = "badge" | "emote" | "gated_content" | "room" | "role";

export const PERK_KINDS: Record<Kind, PerkKind> = {
  badge: PerkKind.BADGE,
  emote: PerkKind.EMOTE,
  gated_content: PerkKind.GATED_CONTENT,
  room: PerkKind.ROOM,
  role: PerkKind.ROLE,
};

export const PERK_STATUS = { active: PerkStatus.ACTIVE, retired: PerkStatus.RETIRED } as const;

/** A kind's name: the contract lets only the kinds PerkKind defines through (and requires one where it must be set). */
export function kindOf(kind: PerkKind): Kind {
  return (Object.keys(PERK_KINDS) as Kind[]).find((name) => PERK_KINDS[name] === kind)!;
}

const TOKEN = /^[a-z][a-z0-9_.-]{0,39}$/;

/**
 * Product bindings: references to the products a perk grants (service, kind, id), no repeats. The contract
 * holds them to 20; each reference is checked here, as pf.v1.EntityRef is every service's and declares no rules.
 */
export function requireBindings(field: string, refs: EntityRef[]): { service: string; kind: string; id: string }[] {
  const seen = new Set<string>();
  return refs.map((ref, index) => {
    if (!TOKEN.test(ref.service)) throw invalid(`${field}[${index}].service`, "service is a service key");
    if (!TOKEN.test(ref.kind))
      throw invalid(`${field}[${index}].kind`, "kind is the product's kind within its service");
    if (ref.id === "" || ref.id.length > 100)
      throw invalid(`${field}[${index}].id`, "id is the product's id (1–100 characters)");
    const key = `${ref.service}/${ref.kind}/${ref.id}`;
    if (seen.has(key)) throw invalid(`${field}[${index}]`, `${field} names a product twice`);
    seen.add(key);
    return { service: ref.service, kind: ref.kind, id: ref.id };
  });
}
