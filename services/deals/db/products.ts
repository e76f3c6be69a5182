import type { EntityManager } from "@mikro-orm/postgresql";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { sql } from "../../kit/db/sql.js";
import type { AliasKind } from "../domain/products.js";
import { ProductAliasRow, ProductRow } from "./entities.js";

export type Alias = { kind: AliasKind; value: string };

/**
 * Adds aliases to a product; an alias another product took first (now or
 * concurrently) stays with it. Answers the aliases it lost that way.
 */
export async function attachAliases(em: EntityManager, productId: string, aliases: Alias[], at: Date) {
  const lost: Alias[] = [];
  for (const alias of aliases) {
    const taken = await sql(
      em,
      `insert into {product_aliases} (kind, value, product_id, created_at) values (?, ?, ?, ?)
       on conflict do nothing returning kind`,
      [alias.kind, alias.value, productId, at],
    );
    if (taken.length === 0) lost.push(alias);
  }
  return lost;
}

/**
 * Serialises resolves naming the same aliases: a transaction-scoped advisory
 * lock per alias, taken in sorted order (two resolves sharing aliases never
 * deadlock), so a second resolve of a new alias waits for the first and finds
 * the product it created instead of creating another.
 */
export async function lockAliases(em: EntityManager, aliases: Alias[]): Promise<void> {
  const keys = [...new Set(aliases.map(({ kind, value }) => `${kind}:${value}`))].sort();
  for (const key of keys) await advisoryLock(em, `deals.alias:${key}`);
}

/** Whether a product with this id exists. */
export async function productExists(em: EntityManager, id: string): Promise<boolean> {
  return (await em.findOne(ProductRow, { id })) !== null;
}

/** A new product, named. */
export async function insertProduct(em: EntityManager, product: { id: string; name: string; at: Date }) {
  em.create(ProductRow, { id: product.id, name: product.name, createdAt: product.at });
  await em.flush();
}

/** The product with this id, known to exist. */
export function productById(em: EntityManager, id: string): Promise<ProductRow> {
  return em.findOneOrFail(ProductRow, { id });
}

/** The known rows of these aliases, whichever product they name. */
export function aliasesNamed(em: EntityManager, aliases: Alias[]): Promise<ProductAliasRow[]> {
  return em.find(ProductAliasRow, { $or: aliases.map(({ kind, value }) => ({ kind, value })) });
}

/** A product's aliases, by kind then value. */
export function aliasesOf(em: EntityManager, productId: string): Promise<ProductAliasRow[]> {
  return em.find(ProductAliasRow, { productId }, { orderBy: { kind: "asc", value: "asc" } });
}
