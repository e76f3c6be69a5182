import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type Space, SpaceSchema, SpaceVisibility } from "../../../gen/pf/space/v1/forum_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { sql } from "../../kit/db/sql.js";
import { problem } from "../../kit/handler/problem.js";
import type { SpaceSeed, Visibility } from "../domain/spaces.js";

/** A space as the reads answer it, with its count of threads not deleted. */
export interface StoredSpace {
  key: string;
  title: string;
  description: string;
  visibility: Visibility;
  membersOnly: boolean;
  vipCreator: string;
  threadCount: number;
  createdAt: Date;
}

/** A space the caller may not open answers as one that does not exist. */
export const spaceNotFound = () => problem(404, "space.not_found", "There is no such space.");

const COLUMNS = `s.key, s.title, s.description, s.visibility, s.members_only as "membersOnly",
  s.vip_creator as "vipCreator", s.created_at as "createdAt",
  (select count(*)::int from {threads} t where t.space = s.key and t.deleted_at is null) as "threadCount"`;

const allSpaces = new HotRead<StoredSpace, []>("spaces.all", `select ${COLUMNS} from {spaces} s order by s.key`);
const spaceByKey = new HotRead<StoredSpace, [string]>(
  "spaces.by_key",
  `select ${COLUMNS} from {spaces} s where s.key = $1`,
);

/** Every space, by key (the caller keeps those the reader may open). */
export function readSpaces(ctx: ReadContext): Promise<StoredSpace[]> {
  return allSpaces.run(ctx);
}

/** One space, or undefined. */
export async function readSpace(ctx: ReadContext, key: string): Promise<StoredSpace | undefined> {
  const [row] = await spaceByKey.run(ctx, key);
  return row;
}

/** The space of a write, read in its transaction (the write sees the space as it commits). */
export async function spaceIn(em: EntityManager, key: string): Promise<StoredSpace | undefined> {
  const [row]: StoredSpace[] = await sql(em, `select ${COLUMNS} from {spaces} s where s.key = ?`, [key]);
  return row;
}

/** Creates a space or replaces what its definition states (idempotent). */
export async function upsertSpace(em: EntityManager, space: SpaceSeed, at: Date): Promise<void> {
  await sql(
    em,
    `insert into {spaces}
       (key, title, description, visibility, members_only, vip_creator, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (key) do update set title = excluded.title, description = excluded.description,
       visibility = excluded.visibility, members_only = excluded.members_only,
       vip_creator = excluded.vip_creator, updated_at = excluded.updated_at`,
    [space.key, space.title, space.description, space.visibility, space.membersOnly, space.vipCreator, at, at],
  );
}

const VISIBILITIES: Record<Visibility, SpaceVisibility> = {
  public: SpaceVisibility.PUBLIC,
  members: SpaceVisibility.MEMBERS,
  staff: SpaceVisibility.STAFF,
};

/** The proto visibility of a stored one, and back ("" for unspecified). */
export const visibilityToProto = (visibility: Visibility) => VISIBILITIES[visibility];
export function visibilityFromProto(visibility: SpaceVisibility): Visibility | "" {
  const found = (Object.keys(VISIBILITIES) as Visibility[]).find((each) => VISIBILITIES[each] === visibility);
  return found ?? "";
}

/** A space as the contract answers it. */
export function spaceToProto(space: StoredSpace): Space {
  return create(SpaceSchema, {
    key: space.key,
    title: space.title,
    description: space.description,
    visibility: visibilityToProto(space.visibility),
    membersOnly: space.membersOnly,
    vipCreator: space.vipCreator,
    threadCount: space.threadCount,
    createdAt: timestampFromDate(new Date(space.createdAt)),
  });
}
