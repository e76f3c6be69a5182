import { createClient } from "@connectrpc/connect";
import Fastify from "fastify";
import type { AddressInfo } from "node:net";
import { NetworkAdminService } from "../gen/pf/network/v1/admin_pb.js";
import { StaffRole } from "../gen/pf/network/v1/network_pb.js";
import type { Platform } from "../services/kit/host.js";
import { runLoad, type Benchmark, type LoadSettings } from "./load.js";
import { startBenchPlatform } from "./platform.js";

const GOAL_RATIO = 0.6;
const GOAL_P99_MS = 10;

/**
 * An authenticated cheap read through the gateway (JWT check, JSON → RPC,
 * ORM read, RPC → JSON) against a bare Fastify route answering the same JSON.
 */
export const gatewayRead: Benchmark = {
  name: "gateway read",
  async run(settings: LoadSettings) {
    const bench = await startBenchPlatform();
    try {
      await seedStaff(bench.platform);
      const token = await bench.platform.mintToken({ kind: "service", svc: "space", caps: ["network.staff.read"] });
      const gateway = { url: `${bench.gatewayUrl}/network/api/v1/staff/moderators`, headers: { authorization: `Bearer ${token}` } };
      const sample = await fetch(gateway.url, { headers: gateway.headers });
      if (!sample.ok) throw new Error(`the staff list answered ${sample.status}: ${await sample.text()}`);
      const body: unknown = await sample.json();

      const bare = await bareFastify(body);
      try {
        // Same headers on both, so only the work behind the route differs.
        const reference = await runLoad("bare fastify", { url: bare.url, headers: gateway.headers }, settings);
        const measured = await runLoad(`gateway (${bench.database})`, gateway, settings);
        // Requests the load left queued would otherwise meet a closing database on stop.
        await fetch(gateway.url, { headers: gateway.headers });
        const ratio = measured.rps / reference.rps;
        const met = ratio >= GOAL_RATIO && measured.p99 < GOAL_P99_MS;
        return {
          rows: [reference, measured],
          notes: [
            `ratio gateway/bare: ${ratio.toFixed(2)} (goal >= ${GOAL_RATIO}), gateway p99 ${measured.p99.toFixed(2)} ms (goal < ${GOAL_P99_MS} ms) ` +
              `at ${settings.connections} connections: goal ${met ? "met" : "NOT met"}`,
            `server CPU per answer: gateway ${(measured.cpuPerRequest / reference.cpuPerRequest).toFixed(1)}× bare`,
          ],
        };
      } finally {
        await bare.close();
      }
    } finally {
      await bench.stop();
    }
  },
};

/** A realistic list: one owner, two admins, three moderators, some with extra capabilities. */
async function seedStaff(platform: Platform): Promise<void> {
  const admin = createClient(NetworkAdminService, platform.transport);
  const token = await platform.mintToken({ kind: "service", svc: "network", caps: ["network.admin"] });
  const options = { headers: { authorization: `Bearer ${token}` } };
  const staff: [string, StaffRole, string[]][] = [
    ["usr_owner1", StaffRole.OWNER, []],
    ["usr_admin1", StaffRole.ADMIN, ["network.staff.blocks"]],
    ["usr_admin2", StaffRole.ADMIN, []],
    ["usr_mod1", StaffRole.GLOBAL_MODERATOR, ["space.posts.hide"]],
    ["usr_mod2", StaffRole.GLOBAL_MODERATOR, []],
    ["usr_mod3", StaffRole.GLOBAL_MODERATOR, []],
  ];
  for (const [subject, role, capabilities] of staff) await admin.setStaff({ subject, role, capabilities }, options);
}

/** The reference: Fastify's default JSON serialisation of the gateway's own answer. */
async function bareFastify(body: unknown): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify();
  app.get("/staff", async () => body);
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/staff`, close: () => app.close() };
}
