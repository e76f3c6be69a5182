import { Migration } from "@mikro-orm/migrations";

/**
 * Where the server has the RUM extension (Debian's postgresql-15-rum), facet pairs indexed with their documents'
 * `published_at` attached: a facet filter's newest matches come from the index in order, the first N read and no
 * more (a GIN bitmap reads every match, then sorts). RUM is not a trusted extension: without it, or without the
 * right to create it (PGlite, a managed server), nothing is created and queries keep the GIN path
 * (`db/sql.ts`, `ordersFacets`).
 */
export class Migration20270105000000_search_recent_facets extends Migration {
  override up(): void {
    this.addSql(`do $$ begin
      if exists (select from pg_available_extensions where name = 'rum') then
        create extension if not exists rum with schema public;
        create index documents_facets_recent on documents
          using rum (facet_pairs public.rum_anyarray_addon_ops, published_at)
          with (attach = 'published_at', to = 'facet_pairs') where published and not deleted;
      end if;
    exception when insufficient_privilege then
      raise notice 'rum not created (%): facet filters read the GIN index', sqlerrm;
    end $$`);
  }
}
