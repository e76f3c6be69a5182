import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ProductAliasSchema, ProductResolveResultSchema, ProductSchema, type DealsService } from "../../../gen/pf/deals/v1/deals_pb.js";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { qualified } from "../../kit/db/orm.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { DealsContext } from "../context.js";
import { ProductAliasRow, ProductRow } from "../db/entities.js";
import { ALIAS_KINDS, normaliseAlias, type AliasKind } from "../domain/products.js";

type ProductHandlers = Pick<ServiceImpl<typeof DealsService>, "resolveProduct">;

type Alias = { kind: AliasKind; value: string };

const aliasProto = (row: { kind: string; value: string; productId: string }) => create(ProductAliasSchema, row);

/**
 * Adds aliases to a product; an alias another product took first (now or
 * concurrently) stays with it and comes back as a conflict.
 */
async function attach(em: EntityManager, productId: string, aliases: Alias[], at: Date): Promise<Alias[]> {
  const lost: Alias[] = [];
  for (const alias of aliases) {
    const taken = await em.getConnection().execute(
      `insert into ${qualified(em, "product_aliases")} (kind, value, product_id, created_at) values (?, ?, ?, ?)
       on conflict do nothing returning kind`,
      [alias.kind, alias.value, productId, at], "all", em.getTransactionContext(),
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
async function lockAliases(em: EntityManager, aliases: Alias[]): Promise<void> {
  const keys = [...new Set(aliases.map(({ kind, value }) => `${kind}:${value}`))].sort();
  for (const key of keys) await advisoryLock(em, `deals.alias:${key}`);
}

/**
 * Product resolution by aliases (gtin, mpn, sku, url, exact name): the
 * product the strongest known alias names; otherwise a new product unless
 * create is false. Aliases naming another product are reported as conflicts
 * and never re-pointed; unknown ones are added to the product resolved.
 */
export function productHandlers(ctx: DealsContext): ProductHandlers {
  return {
    async resolveProduct(request) {
      const sent: Alias[] = ALIAS_KINDS.filter((kind) => request[kind] !== "").map((kind) => ({ kind, value: normaliseAlias(kind, request[kind]) }));
      if (sent.length === 0) throw invalid("gtin", "Send at least one alias: gtin, mpn, sku, name or url.");
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        await lockAliases(em, sent);
        const known = await em.find(ProductAliasRow, { $or: sent.map(({ kind, value }) => ({ kind, value })) });
        const strongest = ALIAS_KINDS.map((kind) => known.find((row) => row.kind === kind)).find((row) => row !== undefined);
        let productId = strongest?.productId;
        let created = false;
        if (productId === undefined) {
          if (request.create === false) throw problem(404, "product.not_found", "No product has these aliases (and create is false).");
          productId = newId("prd");
          em.create(ProductRow, { id: productId, name: request.name.trim() || sent[0].value, createdAt: at });
          await em.flush();
          created = true;
        }
        const unknown = sent.filter(({ kind, value }) => !known.some((row) => row.kind === kind && row.value === value));
        const lost = await attach(em, productId, unknown, at);
        const raced = lost.length ? await em.find(ProductAliasRow, { $or: lost.map(({ kind, value }) => ({ kind, value })) }) : [];
        const conflicts = [...known, ...raced].filter((row) => row.productId !== productId);
        const product = await em.findOneOrFail(ProductRow, { id: productId });
        const aliases = await em.find(ProductAliasRow, { productId }, { orderBy: { kind: "asc", value: "asc" } });
        return create(ProductResolveResultSchema, {
          product: create(ProductSchema, { id: product.id, name: product.name, aliases: aliases.map(aliasProto) }),
          created,
          conflicts: conflicts.map(aliasProto),
        });
      });
    },
  };
}
