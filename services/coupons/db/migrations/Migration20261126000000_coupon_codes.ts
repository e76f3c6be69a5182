import { Migration } from "@mikro-orm/migrations";
import { qualified } from "../../../kit/db/orm.js";
import { codeKeyOf, normalizedCode } from "../../domain/codes.js";

interface Stored {
  id: string;
  merchant_id: string;
  code: string;
  code_key: string;
}

/**
 * Codes compared by NFKC as well as case (domain/codes.ts; PostgreSQL's
 * upper() is not JavaScript's): every code is stored NFKC and gets the new
 * key. Where two codes of one merchant now share a key, a code whose key does
 * not change keeps it, else the oldest takes it; the others keep their old key
 * (nothing stored is lost, and new submissions find the holder of the key). Runs before the schema is on the search path: tables are
 * qualified.
 */
export class Migration20261126000000_coupon_codes extends Migration {
  override async up(): Promise<void> {
    const table = qualified({ config: this.config }, "coupons");
    const rows = (await this.execute(
      `select id, merchant_id, code, code_key from ${table} order by created_at, id`,
    )) as Stored[];
    const changed = rows.filter((row) => normalizedCode(row.code) !== row.code || codeKeyOf(row.code) !== row.code_key);
    const changedIds = new Set(changed.map((row) => row.id));
    const taken = new Set(
      rows.filter((row) => !changedIds.has(row.id)).map((row) => `${row.merchant_id}:${row.code_key}`),
    );
    for (const row of changed) {
      const key = codeKeyOf(row.code);
      const codeKey = taken.has(`${row.merchant_id}:${key}`) ? row.code_key : key;
      taken.add(`${row.merchant_id}:${codeKey}`);
      await this.execute(`update ${table} set code = ?, code_key = ? where id = ?`, [
        normalizedCode(row.code),
        codeKey,
        row.id,
      ]);
    }
  }
}
