import type { EntityManager } from "@mikro-orm/postgresql";
import { advisoryLock } from "../db/advisory-lock.js";
import { sql } from "../db/sql.js";
import { cut, MAX_SLUG_LENGTH, slugify } from "./slugify.js";

/**
 * Slugs with redirects (README "Slugs"), in the kit's `slugs` table of the
 * service's schema. A scope is where a slug must be unique ("threads:<space>",
 * "posts:<blog>"). Every function runs in the caller's transaction, beside
 * the change that names the object.
 */

/** Words that collide with static path segments beside a slug; a scope adds its own. */
export const RESERVED_SLUGS = ["new", "feed", "feed.xml", "bulk", "resolve", "audit", "deliveries", "edit", "internal"];

export interface SlugOptions {
  /** Reserved in this scope besides RESERVED_SLUGS (as written in paths: slugified before comparing). */
  reserved?: readonly string[];
  maxLength?: number;
  at: Date;
}

/** Candidates looked up per statement; the next batch only when all are taken. */
const BATCH = 25;

/**
 * Gives `objectId` the slug of `text` in `scope` and answers it: the slug
 * itself when free, else `-2`, `-3` …; a reserved word is suffixed the same
 * way. A slug is free when no other object holds it as its current one: an
 * old slug of another object is taken over (its redirect ends: the old URL
 * now names the new owner), and one of the object's own old slugs is taken
 * back (renaming back never loops). The object's previous slug becomes a
 * redirect to it. Concurrent claims in a scope run one after the other (an
 * advisory lock on the scope, held to the end of the transaction).
 */
export async function claimSlug(
  em: EntityManager,
  scope: string,
  objectId: string,
  text: string,
  options: SlugOptions,
): Promise<string> {
  const max = options.maxLength ?? MAX_SLUG_LENGTH;
  const base = slugify(text, fallbackOf(objectId), max);
  const reserved = new Set([...RESERVED_SLUGS, ...(options.reserved ?? [])].map((word) => slugify(word)));
  await advisoryLock(em, `kit.slugs:${scope}`);
  for (let first = 1; ; first += BATCH) {
    const candidates = Array.from({ length: BATCH }, (_, i) => candidate(base, first + i, max));
    const rows: { slug: string; object_id: string; current: boolean }[] = await sql(
      em,
      `select slug, object_id, current from {slugs} where scope = ? and slug in (?)`,
      [scope, candidates],
    );
    const holders = new Map(rows.map((row) => [row.slug, row]));
    const chosen = candidates.find((slug) => {
      const holder = holders.get(slug);
      return !reserved.has(slug) && !(holder && holder.current && holder.object_id !== objectId);
    });
    if (chosen === undefined) continue;
    const holder = holders.get(chosen);
    if (holder?.current) return chosen;
    await sql(em, `update {slugs} set current = false where scope = ? and object_id = ? and current`, [
      scope,
      objectId,
    ]);
    // An old slug taken over or back: its redirect ends.
    if (holder) await sql(em, `delete from {slugs} where scope = ? and slug = ?`, [scope, chosen]);
    await sql(em, `insert into {slugs} (scope, slug, object_id, current, changed_at) values (?, ?, ?, true, ?)`, [
      scope,
      chosen,
      objectId,
      options.at,
    ]);
    return chosen;
  }
}

/** What a slug names in a scope: the object and its current slug; `moved` when the slug is an old one (answer 301). */
export interface SlugTarget {
  objectId: string;
  slug: string;
  moved: boolean;
}

/** Resolves a slug, old ones to their object's current slug (one hop however many renames); undefined when unknown. */
export async function resolveSlug(em: EntityManager, scope: string, slug: string): Promise<SlugTarget | undefined> {
  const [row]: { object_id: string; current_slug: string }[] = await sql(
    em,
    `select s.object_id, c.slug as current_slug from {slugs} s
     join {slugs} c on c.scope = s.scope and c.object_id = s.object_id and c.current
     where s.scope = ? and s.slug = ?`,
    [scope, slug],
  );
  return row && { objectId: row.object_id, slug: row.current_slug, moved: row.current_slug !== slug };
}

/** Forgets an object's slugs, current and old (it is gone for good): they become free in the scope. */
export async function dropSlugs(em: EntityManager, scope: string, objectId: string): Promise<void> {
  await advisoryLock(em, `kit.slugs:${scope}`);
  await sql(em, `delete from {slugs} where scope = ? and object_id = ?`, [scope, objectId]);
}

/** The n-th candidate: the base, then `base-n` cut so the suffix fits. */
function candidate(base: string, n: number, max: number): string {
  if (n === 1) return base;
  const suffix = `-${n}`;
  return cut(base, max - suffix.length) + suffix;
}

/** The slug of text with nothing to spell (emoji): the object's id, lowercased (unique in the scope already). */
function fallbackOf(objectId: string): string {
  return slugify(objectId.slice(objectId.indexOf("_") + 1)) || "item";
}
