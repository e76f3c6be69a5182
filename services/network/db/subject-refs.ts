import { create } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { SubjectRefSchema, type SubjectRef } from "../../../gen/pf/v1/refs_pb.js";
import { Subject } from "./entities.js";

/** Canonical refs with their display projection; a subject without a stored display gets its id alone. */
export async function subjectRefs(em: EntityManager, ids: string[]): Promise<Map<string, SubjectRef>> {
  const rows = ids.length === 0 ? [] : await em.find(Subject, { id: { $in: [...new Set(ids)] } });
  const stored = new Map(rows.map((row) => [row.id, row]));
  return new Map(ids.map((id) => [id, toRef(id, stored.get(id))]));
}

export function toRef(id: string, row: Subject | undefined): SubjectRef {
  return create(SubjectRefSchema, {
    id,
    display: row ? { displayName: row.displayName, handle: row.handle, avatarUrl: row.avatarUrl } : undefined,
  });
}
