import { afterAll, beforeAll, expect } from "vitest";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { until } from "../support/until.js";

let database: TestPlatform;
let proxy: TcpProxy;
let t: TestPlatform;

beforeAll(async () => {
  if (DATABASE_SERVER.skips) return;
  // A database the platform reaches only through a proxy the test can cut.
  database = await startTestPlatform({ services: ["network"] });
  const url = new URL(database.platform.databaseUrl);
  proxy = new TcpProxy(url.hostname, Number(url.port || 5432));
  await proxy.open();
  url.host = `127.0.0.1:${proxy.port}`;
  t = await startTestPlatform({ services: ["network"], env: { DATABASE_URL: url.toString() } });
});
afterAll(async () => {
  await t?.stop();
  await proxy?.cut();
  await database?.stop();
});

// A database server the platform reaches over TCP: the embedded one is a single session inside the process, where a
// new connection meets the named statements of the connections the cut dropped.
describeWith(DATABASE_SERVER, "when the database is unreachable", () => {
  itWith(
    DATABASE_SERVER,
    "answers 503 dependency.unavailable (never a bare 500), reports not ready, and recovers when it is back",
    async () => {
      const token = await t.token({ kind: "service", svc: "tips", caps: ["identity.subject.resolve"] });
      const resolve = () => t.http("GET", "/network/internal/identity/resolve?service=tips&local_id=1", { token });
      expect((await resolve()).status).toBe(404);

      await proxy.cut();
      const down = await resolve();
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ code: "dependency.unavailable", status: 503 });
      expect((await t.http("GET", "/readyz")).status).toBe(503);

      await proxy.open();
      await until(async () => (await resolve()).status === 404, 10_000);
      expect((await t.http("GET", "/readyz")).status).toBe(200);
    },
  );
});
