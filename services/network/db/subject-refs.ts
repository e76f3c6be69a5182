import { create } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { SubjectRefSchema, type SubjectRef } from "../../../gen/pf/v1/refs_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { Subject } from "./entities.js";

/** A subject's stored display projection. */
export interface SubjectDisplay {
  displayName: string;
  handle: string;
  avatarUrl: string;
}

const storedSubjects = new HotRead<{ id: string } & SubjectDisplay, [string[]]>(
  "subjects.by_id",
  `select id, display_name as "displayName", handle, avatar_url as "avatarUrl" from {subjects} where id = any($1)`,
);

/** Canonical refs with their display projection; a subject without a stored display gets its id alone. */
export async function subjectRefs(ctx: ReadContext, ids: string[]): Promise<Map<string, SubjectRef>> {
  const rows = ids.length === 0 ? [] : await storedSubjects.run(ctx, [...new Set(ids)]);
  const stored = new Map(rows.map((row) => [row.id, row]));
  return new Map(ids.map((id) => [id, toRef(id, stored.get(id))]));
}

export function toRef(id: string, row: SubjectDisplay | undefined): SubjectRef {
  return create(SubjectRefSchema, {
    id,
    display: row ? { displayName: row.displayName, handle: row.handle, avatarUrl: row.avatarUrl } : undefined,
  });
}

/** Writes a subject's display projection. */
export const saveSubject = (em: EntityManager, subject: SubjectDisplay & { id: string; updatedAt: Date }) =>
  em.upsert(Subject, subject);
