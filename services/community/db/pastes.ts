import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { type Paste, PasteSchema } from "../../../gen/pf/community/v1/common_pb.js";
import { authorFromColumns, authorshipToProto } from "../../kit/handler/authorship.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { qualified } from "../../kit/db/orm.js";
import { claimSlug, resolveSlug } from "../../kit/slugs/slugs.js";
import { PasteRow } from "./entities.js";
import { threadOfRef } from "./threads.js";

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

/**
 * A person's active pastes, newest first, after a cursor (created_at, id), without their text: a listing never
 * holds a page of 512 KiB texts (README "Pastes").
 */
export async function pastesOf(
  em: EntityManager,
  owner: string,
  after: [string, string] | undefined,
  limit: number,
): Promise<PasteRow[]> {
  const rows = em.find(
    PasteRow,
    {
      owner,
      state: { $ne: "deleted" },
      ...(after
        ? {
            $or: [{ createdAt: { $lt: new Date(after[0]) } }, { createdAt: new Date(after[0]), id: { $lt: after[1] } }],
          }
        : {}),
    },
    { orderBy: { createdAt: "desc", id: "desc" }, limit, exclude: ["body"] },
  );
  // The body is left unread: pasteToProto answers none in a listing.
  return rows as Promise<PasteRow[]>;
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
  const table = qualified(em, reaction === "likes" ? "paste_likes" : "paste_copies");
  const rows = await em.getConnection().execute<{ paste_id: string }[]>(
    `with added as (insert into ${table} (paste_id, person, created_at) values (?, ?, ?)
         on conflict do nothing returning paste_id)
       update ${qualified(em, "pastes")} set ${reaction} = ${reaction} + 1 where id in (select paste_id from added)
       returning id as paste_id`,
    [pasteId, person, at],
    "all",
    em.getTransactionContext(),
  );
  return rows.length > 0;
}

/** Withdraws a person's like; answers whether there was one. */
export async function unlike(em: EntityManager, pasteId: string, person: string): Promise<boolean> {
  const rows = await em.getConnection().execute<{ paste_id: string }[]>(
    `with removed as (delete from ${qualified(em, "paste_likes")} where paste_id = ? and person = ? returning paste_id)
       update ${qualified(em, "pastes")} set likes = likes - 1 where id in (select paste_id from removed)
       returning id as paste_id`,
    [pasteId, person],
    "all",
    em.getTransactionContext(),
  );
  return rows.length > 0;
}

/** Whether a person likes a paste. */
export async function likes(em: EntityManager, pasteId: string, person: string | undefined): Promise<boolean> {
  if (!person) return false;
  return (
    (
      await em
        .getConnection()
        .execute<unknown[]>(
          `select 1 from ${qualified(em, "paste_likes")} where paste_id = ? and person = ?`,
          [pasteId, person],
          "all",
          em.getTransactionContext(),
        )
    ).length > 0
  );
}

/**
 * A paste as a reader sees it: a censored paste's text only to staff (the
 * original is kept), and no text in a listing. Its HTML is the kit's to
 * render once the answer is made (body_html declares `markdown_of`).
 */
export async function pasteToProto(
  em: EntityManager,
  row: PasteRow,
  reader: { person?: string; staff?: boolean; listing?: boolean } = {},
): Promise<Paste> {
  const shown = !reader.listing && (row.state === "active" || (row.state === "censored" && reader.staff === true));
  const thread = await threadOfRef(em, pasteRef(row.id));
  return create(PasteSchema, {
    id: row.id,
    slug: row.slug,
    title: row.title,
    kind: row.kind,
    body: shown ? row.body : "",
    screenshot: shown ? (row.screenshot ?? "") : "",
    language: row.language,
    authorship: authorshipToProto(authorFromColumns(row as Parameters<typeof authorFromColumns>[0])),
    owner: row.owner ?? "",
    forkedFrom: row.forkedFrom ?? "",
    state: row.state,
    likes: BigInt(row.likes),
    copies: BigInt(row.copies),
    forks: BigInt(row.forks),
    comments: BigInt(thread?.comments ?? 0),
    revision: BigInt(row.revision),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    liked: await likes(em, row.id, reader.person),
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
