import { Migration } from "@mikro-orm/migrations";

/** Intents may buy a tip (TipPayment): the creator paid is kept in `streamer`, the payee column. */
export class Migration20261124000000_tip_intents extends Migration {
  override up(): void {
    this.addSql(`alter table intents drop constraint intents_product_check`);
    this.addSql(
      `alter table intents add constraint intents_product_check check (product in ('credit', 'channel_subscription', 'tip'))`,
    );
  }
}
