import type { EntityManager } from "@mikro-orm/postgresql";
import { invalid, problem } from "../kit/handler/problem.js";
import { entityByRef } from "./db/catalog.js";
import type { EntityRow } from "./db/entities.js";

/** A `{ref}` as given: an id or a slug, required. */
export function requireRef(field: string, ref: string): string {
  const trimmed = ref.trim();
  if (trimmed === "") throw invalid(field, `${field} is required: an entity id or slug`);
  if (trimmed.length > 128) throw invalid(field, `${field} holds at most 128 characters`);
  return trimmed;
}

/** The entity `{ref}` names (an old slug follows to it), or 404 entity.not_found. */
export async function entityOf(em: EntityManager, ref: string, lock = false): Promise<EntityRow> {
  const found = await entityByRef(em, ref, lock);
  if (!found) throw entityNotFound(ref);
  return found.row;
}

/** An active entity (not merged), or 409 entity.merged: a merged entity changes only through a split. */
export function requireActive(row: EntityRow): EntityRow {
  if (row.state === "merged")
    throw problem(409, "entity.merged", `${row.id} is merged into ${row.mergedInto ?? ""}; split it first.`, {
      merged_into: row.mergedInto ?? "",
    });
  return row;
}

export function entityNotFound(ref: string): Error {
  return problem(404, "entity.not_found", `There is no entity ${ref}.`, { ref });
}
