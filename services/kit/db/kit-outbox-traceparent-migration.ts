import { Migration } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";

/** The W3C traceparent of the span that wrote an outbox row (runtime/tracing.ts), sent with the event; null untraced. */
class KitOutboxTraceparent extends Migration {
  override up(): void {
    this.addSql(`alter table outbox add column traceparent text`);
  }
}

export const kitOutboxTraceparentMigration: MigrationObject = {
  name: "Migration00000000000002_kit_outbox_traceparent",
  class: KitOutboxTraceparent,
};
