import { describe, expect, it } from "vitest";
import { modules } from "../../platform/registry.js";
import { usePlatform } from "../support/platform.js";

const t = usePlatform();

describe.each(modules.map((m) => ({ key: m.key })))("the $key schema", ({ key }) => {
  it("is exactly what its entities describe once its committed migrations ran (no drift)", async () => {
    const orm = t.platform.contexts.get(key)!.orm;
    // The kit's own tables (outbox, inbox, idempotency keys) have no entities: dropTables is off.
    const drift = await orm.schema.getUpdateSchemaSQL({ wrap: false, dropTables: false, schema: key });
    expect(drift.trim()).toBe("");
  });
});
