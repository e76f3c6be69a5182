import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect } from "vitest";
import { startPlatform, type Platform } from "../../platform/host.js";
import { modules } from "../../platform/registry.js";
import { adminQuery, withDatabase } from "../../services/kit/db/server.js";
import { schemaOf } from "../../services/kit/migrations.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { serverUrl } from "../support/database.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";

// Each instance takes its services' migration locks on one connection and migrates them side by side: instances
// wanting overlapping services in any order take the locks by name, so none waits for another in a circle.
const INSTANCES = ["billing,tips,vip", "vip,tips,coupons", "tips,billing"];

describeWith(DATABASE_SERVER, "platforms starting at once on an empty database", () => {
  const name = `pf_test_${randomBytes(6).toString("hex")}`;
  const url = () => withDatabase(serverUrl()!, name);
  let dir: string;

  beforeAll(async () => {
    await adminQuery(serverUrl()!, `create database ${name}`);
    dir = await mkdtemp(join(tmpdir(), "pf-migrations-at-once-"));
  });
  afterAll(async () => {
    await adminQuery(serverUrl()!, `drop database if exists ${name} with (force)`);
    await rm(dir, { recursive: true, force: true });
  });

  itWith(
    DATABASE_SERVER,
    "all start, each schema migrated once, every committed migration recorded",
    async () => {
      const started = await Promise.allSettled(
        INSTANCES.map((services, i) =>
          startPlatform({
            config: loadConfig({
              DATABASE_URL: url(),
              PF_SERVICES: services,
              PF_HTTP_PORT: "0",
              PF_RPC_PORT: "0",
              PF_METRICS_PORT: "off",
              PF_EMBEDDED_AGENT: "0",
              PF_DATA_DIR: join(dir, `instance-${i}`),
            }),
            modules,
            logger: createLogger("silent"),
          }),
        ),
      );
      const platforms = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      try {
        expect(started.filter((s) => s.status === "rejected")).toEqual([]);
        const client = new pg.Client({ connectionString: url() });
        await client.connect();
        try {
          for (const key of ["billing", "tips", "vip", "coupons"]) {
            const { rows } = await client.query<{ name: string }>(
              `select name from "${key}".mikro_orm_migrations order by id`,
            );
            const module = modules.find((m) => m.key === key)!;
            expect(rows.map((r) => r.name)).toEqual(schemaOf(module).migrations.map((m) => m.name));
          }
        } finally {
          await client.end();
        }
      } finally {
        await Promise.all(platforms.map((platform: Platform) => platform.stop()));
      }
    },
    120_000,
  );
});
