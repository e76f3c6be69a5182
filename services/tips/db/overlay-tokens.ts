import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import { OverlayTokenRow } from "./overlay-entities.js";

/** Up to `rows` of a creator's overlay tokens (revoked ones when asked), newest first, before the cursor's id. */
export function tokensOf(
  em: EntityManager,
  creator: string,
  includeRevoked: boolean,
  before: string | undefined,
  rows: number,
): Promise<OverlayTokenRow[]> {
  return em.find(
    OverlayTokenRow,
    {
      creator,
      ...(includeRevoked ? {} : { revokedAt: null }),
      ...(before ? { id: { $lt: before } } : {}),
    },
    { orderBy: { id: "desc" }, limit: rows },
  );
}

/** How many live (unrevoked) overlay tokens a creator keeps. */
export function liveTokenCount(em: EntityManager, creator: string): Promise<number> {
  return em.count(OverlayTokenRow, { creator, revokedAt: null });
}

/** Writes a newly minted token under a new id. */
export async function insertToken(
  em: EntityManager,
  token: Omit<RequiredEntityData<OverlayTokenRow>, "id">,
): Promise<OverlayTokenRow> {
  const row = em.create(OverlayTokenRow, { ...token, id: newId("ovt") });
  await em.flush();
  return row;
}

/** A token locked for a change, inside the caller's transaction; null when there is none. */
export function lockToken(em: EntityManager, id: string): Promise<OverlayTokenRow | null> {
  return em.findOne(OverlayTokenRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** Revokes a locked token for good. */
export async function revokeToken(em: EntityManager, row: OverlayTokenRow, at: Date): Promise<void> {
  row.revokedAt = at;
  await em.flush();
}

/** Whether a token has been revoked (reading that column only). */
export async function isRevoked(em: EntityManager, tokenId: string): Promise<boolean> {
  return (await em.findOne(OverlayTokenRow, { id: tokenId }, { fields: ["revokedAt"] }))?.revokedAt != null;
}

/** The token whose secret hashes to this, if any. */
export function tokenBySecretHash(em: EntityManager, secretHash: string): Promise<OverlayTokenRow | null> {
  return em.findOne(OverlayTokenRow, { secretHash });
}
