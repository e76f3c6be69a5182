import { Migration } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";

/** The service's editor list (`editors/editors.ts`): the people who may act as its editors. */
class KitEditors extends Migration {
  override up(): void {
    this.addSql(`create table editors (
      subject text primary key,
      added_by text not null,
      added_at timestamptz not null
    )`);
  }
}

export const kitEditorsMigration: MigrationObject = { name: "Migration00000000000003_kit_editors", class: KitEditors };
