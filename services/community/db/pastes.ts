import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { type Paste, PasteSchema } from "../../../gen/pf/community/v1/common_pb.js";
import { authorFromColumns, authorshipToProto } from "../../kit/auth/authorship.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { sql } from "../../kit/db/sql.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { claimSlug, resolveSlug } from "../../kit/slugs/slugs.js";
import { PasteRow } from "./entities.js";

/** The slug scope of pastes: one namespace under /api/pastes. */
const SLUGS = "pastes";
/** Path segments beside a paste's slug (`/api/pastes/bulk`, `/api/pastes/{slug}/raw`). */
const RESERVED = ["bulk", "raw"];

export const pasteNotFound = () => problem(404, "paste.not_found", "No such paste.");

/** The EntityRef of a paste's comment thread. */
export const pasteRef = (pasteId: string) => ({ service: "community", kind: "paste", id: pasteId });

/** Gives a paste the slug of its title (old slugs redirect to it). */
export function claimPasteSlug(em: EntityManager, pasteId: string, title: string, at: Date): Promise<string> {
  return claimSlug(em, SLUGS, pasteId, title, { reserved: RESERVED, at });
}

/**
 * The paste a slug names, old slugs included (`moved` then): a deleted paste
 * is 404 as a missing one. `lock` takes its row lock (writes on one paste in order).
 */
export async function pasteBySlug(
  em: EntityManager,
  slug: string,
  lock = false,
): Promise<{ row: PasteRow; moved: boolean }> {
  const target = await resolveSlug(em, SLUGS, slug);
  if (!target) throw pasteNotFound();
  const row = await em.findOne(PasteRow, { id: target.objectId }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!row || row.state === "deleted") throw pasteNotFound();
  return { row, moved: target.moved };
}

/** Whether a paste exists and is not deleted (its comment thread is then readable as the paste is). */
export async function pasteLives(em: EntityManager, id: string): Promise<boolean> {
  const row = await em.findOne(PasteRow, { id });
  return row !== null && row.state !== "deleted";
}

/** A paste of a listing: its row without the text, its comment count and whether the reader likes it. */
export type ListedPaste = Omit<PasteRow, "body" | "screenshot" | "censorReason" | "createdAt" | "updatedAt"> & {
  createdAt: string;
  updatedAt: string;
  comments: number;
  liked: boolean;
};

/** The comment count of the paste `id` names (its thread, if ever resolved) and whether `person` likes it. */
const facts = (id: string, person: string) =>
  `coalesce((select t.comments from {threads} t
      where t.ref_service = 'community' and t.ref_kind = 'paste' and t.ref_id = ${id}), 0) as comments,
    exists (select 1 from {paste_likes} l where l.paste_id = ${id} and l.person = ${person}) as liked`;
const LISTED = `p.id, p.slug, p.title, p.kind, p.language, p.author_kind as "authorKind", p.author, p.workflow,
  p.run_id as "runId", p.stub_provider as "stubProvider", p.requested_by as "requestedBy", p.owner,
  p.forked_from as "forkedFrom", p.state, p.likes, p.copies, p.forks, p.revision, p.created_at as "createdAt",
  p.updated_at as "updatedAt", ${facts("p.id", "$2")}`;
const OWNED = `p.owner = $1 and p.state <> 'deleted'`;
const pastesFirst = new HotRead<ListedPaste, [string, string | null, number]>(
  "pastes.of_owner.first",
  `select ${LISTED} from {pastes} p where ${OWNED} order by p.created_at desc, p.id desc limit $3`,
);
const pastesNext = new HotRead<ListedPaste, [string, string | null, number, string, string]>(
  "pastes.of_owner.next",
  `select ${LISTED} from {pastes} p where ${OWNED} and (p.created_at, p.id) < ($4::timestamptz, $5::text)
    order by p.created_at desc, p.id desc limit $3`,
);

/**
 * A person's active pastes, newest first, after a cursor (created_at, id), as `reader` sees them: one statement
 * whatever the page's size, without their text (a listing never holds a page of 512 KiB texts, README "Pastes").
 */
export function readPastesOf(
  ctx: ReadContext,
  owner: string,
  reader: string | undefined,
  after: { at: Date; id: string } | undefined,
  limit: number,
): Promise<ListedPaste[]> {
  if (!after) return pastesFirst.run(ctx, owner, reader ?? null, limit);
  return pastesNext.run(ctx, owner, reader ?? null, limit, after.at.toISOString(), after.id);
}

/** A listed paste's message: no text, no screenshot (the paste's read has them). */
export function listedPasteToProto(row: ListedPaste): Paste {
  return pasteMessage(
    { ...row, body: "", screenshot: "", createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) },
    row,
  );
}

/**
 * Counts one reaction (like or copy) of a person once: answers whether it was
 * new, and moves the paste's counter with it in the same statement.
 */
export async function react(
  em: EntityManager,
  reaction: "likes" | "copies",
  pasteId: string,
  person: string,
  at: Date,
): Promise<boolean> {
  const table = reaction === "likes" ? "{paste_likes}" : "{paste_copies}";
  const rows = await sql<{ paste_id: string }>(
    em,
    `with added as (insert into ${table} (paste_id, person, created_at) values (?, ?, ?)
         on conflict do nothing returning paste_id)
       update {pastes} set ${reaction} = ${reaction} + 1 where id in (select paste_id from added)
       returning id as paste_id`,
    [pasteId, person, at],
  );
  return rows.length > 0;
}

/** Withdraws a person's like; answers whether there was one. */
export async function unlike(em: EntityManager, pasteId: string, person: string): Promise<boolean> {
  const rows = await sql<{ paste_id: string }>(
    em,
    `with removed as (delete from {paste_likes} where paste_id = ? and person = ? returning paste_id)
       update {pastes} set likes = likes - 1 where id in (select paste_id from removed)
       returning id as paste_id`,
    [pasteId, person],
  );
  return rows.length > 0;
}

/**
 * A paste as a reader sees it: a censored paste's text only to staff (the
 * original is kept). Its HTML is the kit's to render once the answer is made
 * (body_html declares `markdown_of`). Its comment count and the reader's like
 * are read in one statement, in the caller's transaction.
 */
export async function pasteToProto(
  em: EntityManager,
  row: PasteRow,
  reader: { person?: string; staff?: boolean } = {},
): Promise<Paste> {
  const shown = row.state === "active" || (row.state === "censored" && reader.staff === true);
  const [read] = await sql<{ comments: number; liked: boolean }>(em, `select ${facts("?", "?")}`, [
    row.id,
    row.id,
    reader.person ?? null,
  ]);
  return pasteMessage({ ...row, body: shown ? row.body : "", screenshot: shown ? (row.screenshot ?? "") : "" }, read!);
}

/** The message of a paste whose text is already what the reader may see. */
function pasteMessage(
  row: Omit<PasteRow, "censorReason" | "screenshot"> & { screenshot: string },
  facts: { comments: number; liked: boolean },
): Paste {
  return create(PasteSchema, {
    id: row.id,
    slug: row.slug,
    title: row.title,
    kind: row.kind,
    body: row.body,
    screenshot: row.screenshot,
    language: row.language,
    authorship: authorshipToProto(authorFromColumns(row)),
    owner: row.owner ?? "",
    forkedFrom: row.forkedFrom ?? "",
    state: row.state,
    likes: BigInt(row.likes),
    copies: BigInt(row.copies),
    forks: BigInt(row.forks),
    comments: BigInt(facts.comments),
    revision: BigInt(row.revision),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    liked: facts.liked,
  });
}

/** Writes a new paste with the slug of its title. */
export async function insertPaste(em: EntityManager, values: Omit<PasteRow, "id" | "slug">): Promise<PasteRow> {
  const id = newId("pas");
  const slug = await claimPasteSlug(em, id, values.title, values.createdAt);
  const row = em.create(PasteRow, { id, slug, ...values });
  await em.flush();
  return row;
}

/** Writes changes to a paste (those made on the row, and `changes`) in the caller's transaction. */
export async function changePaste(em: EntityManager, row: PasteRow, changes: Partial<PasteRow> = {}): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

/** Reads a paste's row again (its counts after a reaction written in SQL). */
export async function reloadPaste(em: EntityManager, row: PasteRow): Promise<void> {
  await em.refresh(row);
}
