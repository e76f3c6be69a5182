import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { DealsService } from "../../../gen/pf/deals/v1/deals_pb.js";
import { ProductAliasSchema, ProductResolveResultSchema, ProductSchema } from "../../../gen/pf/deals/v1/products_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { DealsContext } from "../context.js";
import {
  aliasesNamed,
  aliasesOf,
  attachAliases,
  insertProduct,
  lockAliases,
  productById,
  type Alias,
} from "../db/products.js";
import { ALIAS_KINDS, normaliseAlias } from "../domain/products.js";

type ProductHandlers = Pick<ServiceImpl<typeof DealsService>, "resolveProduct">;

const aliasProto = (row: { kind: string; value: string; productId: string }) => create(ProductAliasSchema, row);

/**
 * Product resolution by aliases (gtin, mpn, sku, url, exact name): the
 * product the strongest known alias names; otherwise a new product unless
 * create is false. Aliases naming another product are reported as conflicts
 * and never re-pointed; unknown ones are added to the product resolved.
 */
export function productHandlers(ctx: DealsContext): ProductHandlers {
  return {
    async resolveProduct(request) {
      const sent: Alias[] = ALIAS_KINDS.filter((kind) => request[kind] !== "").map((kind) => ({
        kind,
        value: normaliseAlias(kind, request[kind]),
      }));
      if (sent.length === 0) throw invalid("gtin", "Send at least one alias: gtin, mpn, sku, name or url.");
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        await lockAliases(em, sent);
        const known = await aliasesNamed(em, sent);
        const strongest = ALIAS_KINDS.map((kind) => known.find((row) => row.kind === kind)).find(
          (row) => row !== undefined,
        );
        let productId = strongest?.productId;
        let created = false;
        if (productId === undefined) {
          if (request.create === false)
            throw problem(404, "product.not_found", "No product has these aliases (and create is false).");
          productId = newId("prd");
          await insertProduct(em, { id: productId, name: request.name.trim() || sent[0].value, at });
          created = true;
        }
        const unknown = sent.filter(
          ({ kind, value }) => !known.some((row) => row.kind === kind && row.value === value),
        );
        const lost = await attachAliases(em, productId, unknown, at);
        const raced = lost.length ? await aliasesNamed(em, lost) : [];
        const conflicts = [...known, ...raced].filter((row) => row.productId !== productId);
        const product = await productById(em, productId);
        const aliases = await aliasesOf(em, productId);
        return create(ProductResolveResultSchema, {
          product: create(ProductSchema, { id: product.id, name: product.name, aliases: aliases.map(aliasProto) }),
          created,
          conflicts: conflicts.map(aliasProto),
        });
      });
    },
  };
}
