import { create } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type Resolution, ResolutionSchema } from "../../../gen/pf/reviews/v1/envelopes_pb.js";
import { invalid } from "../../kit/handler/problem.js";
import { type AliasKind, IDENTIFIER_KINDS, nameKey, normalizeAlias } from "../domain/identifiers.js";
import { entityAnswer, entityAnswers } from "./answers.js";
import { aliasOwner, candidatesByName, entitiesById, rootOf } from "./catalog.js";

/** What a resolution is asked: identifiers by kind (raw), and a name. */
export interface ResolveQuery {
  q: string;
  url: string;
  gtin: string;
  sku: string;
  mpn: string;
  source: string;
  externalId: string;
}

/** What identifiers name: the active entities they lead to, and the merged chain walked for each. */
export interface Resolved {
  roots: string[];
  chains: Map<string, string[]>;
}

/**
 * The entities identifiers name (hardest rule 2). Each identifier is
 * normalised as aliases are at write; one that names a merged entity leads to
 * the entity it was merged into. Several identifiers agreeing answer one root;
 * disagreeing ones answer every root they name (a conflict, none chosen).
 */
export async function resolveIdentifiers(
  em: EntityManager,
  identifiers: { kind: AliasKind; normalized: string }[],
): Promise<Resolved> {
  const roots: string[] = [];
  const chains = new Map<string, string[]>();
  for (const { kind, normalized } of identifiers) {
    const owner = await aliasOwner(em, kind, normalized);
    if (!owner) continue;
    const [entity] = await entitiesById(em, [owner.entityId]);
    if (!entity || entity.state === "deleted") continue;
    const { root, chain } = await rootOf(em, entity);
    if (!roots.includes(root.id)) roots.push(root.id);
    if (chain.length > 0) chains.set(root.id, chain);
  }
  return { roots, chains };
}

/**
 * Resolves a query: identifiers answer `match` (exactly one entity) or
 * `conflict` (several, listed, none chosen) or `none`; a name alone answers
 * `candidates`, never a match, even when there is only one.
 */
export async function resolve(em: EntityManager, query: ResolveQuery): Promise<Resolution> {
  const given: [AliasKind, string, string][] = [
    ["url", "url", query.url],
    ["gtin", "gtin", query.gtin],
    ["sku", "sku", query.sku],
    ["mpn", "mpn", query.mpn],
    ["source", "source", query.source],
    ["external_id", "external_id", query.externalId],
  ];
  const identifiers = given
    .filter(([, , value]) => value.trim() !== "")
    .map(([kind, field, value]) => ({ kind, normalized: normalizeAlias(field, kind, value) }));
  if (identifiers.length === 0) {
    const key = nameKey(query.q);
    if (key === "") throw invalid("q", `a name (q) or an identifier (${IDENTIFIER_KINDS.join(", ")}) is required`);
    const candidates = await entityAnswers(
      em,
      (await candidatesByName(em, key)).filter((row) => row.state === "active"),
    );
    return create(ResolutionSchema, { outcome: candidates.length ? "candidates" : "none", candidates });
  }
  if (query.q.trim() !== "") throw invalid("q", "a name goes alone: with identifiers it could never decide");
  const { roots, chains } = await resolveIdentifiers(em, identifiers);
  if (roots.length === 0) return create(ResolutionSchema, { outcome: "none" });
  const entities = await entitiesById(em, roots);
  if (roots.length > 1)
    return create(ResolutionSchema, { outcome: "conflict", candidates: await entityAnswers(em, entities) });
  return create(ResolutionSchema, {
    outcome: "match",
    entity: await entityAnswer(em, entities[0]),
    mergedFrom: chains.get(roots[0]) ?? [],
  });
}
