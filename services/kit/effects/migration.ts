import { Migration } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";

/** Effects another service refused for good (`effects/effect.ts`): kept for the owner to read, never retried. */
class KitEffectRefusals extends Migration {
  override up(): void {
    this.addSql(`create table effect_refusals (
      effect text not null,
      event_id text not null,
      subject text not null,
      status integer not null,
      code text not null,
      detail text not null,
      refused_at timestamptz not null default now(),
      primary key (effect, event_id)
    )`);
  }
}

export const kitEffectRefusalsMigration: MigrationObject = {
  name: "Migration00000000000006_kit_effect_refusals",
  class: KitEffectRefusals,
};
