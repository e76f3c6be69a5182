import { createClient } from "@connectrpc/connect";
import Fastify, { type FastifyInstance } from "fastify";
import pg from "pg";
import type { AddressInfo } from "node:net";
import { NetworkAdminService } from "../gen/pf/network/v1/admin_pb.js";
import { StaffRole } from "../gen/pf/network/v1/network_pb.js";
import type { Platform } from "../platform/host.js";
import { runLoad, type Benchmark, type LoadSettings } from "./load.js";
import { loadConfig } from "../services/kit/runtime/config.js";
import { startBenchPlatform } from "./platform.js";

const { Pool } = pg;

/** What one gateway benchmark reads, and the goal it is held to (if any). */
interface GatewayRoute {
  name: string;
  /** Path under the gateway, and the capability of the token that reads it. */
  path: string;
  capability: string;
  goal?: { ratio: number; p99Ms: number };
  description: string;
  /** A second reference doing the route's own database work on a bare server, and the gateway's goal against it. */
  databaseReference?: { label: string; goal: number; start(databaseUrl: string, body: unknown): Promise<BareServer> };
}

interface BareServer {
  url: string;
  close(): Promise<void>;
}

/**
 * An authenticated cheap read through the gateway (JWT check, JSON → RPC,
 * handler, RPC → JSON) against a bare Fastify route answering the same JSON.
 */
function gatewayBenchmark(route: GatewayRoute): Benchmark {
  return {
    name: route.name,
    async run(settings: LoadSettings) {
      const bench = await startBenchPlatform();
      try {
        await seed(bench.platform);
        const token = await bench.platform.mintToken({ kind: "service", svc: "space", caps: [route.capability] });
        const gateway = { url: `${bench.gatewayUrl}${route.path}`, headers: { authorization: `Bearer ${token}` } };
        const sample = await fetch(gateway.url, { headers: gateway.headers });
        if (!sample.ok) throw new Error(`${route.path} answered ${sample.status}: ${await sample.text()}`);
        const body: unknown = await sample.json();

        const bare = await bareFastify(body);
        const database = await route.databaseReference?.start(bench.platform.databaseUrl, body);
        try {
          // Same headers on all, so only the work behind the route differs.
          const reference = await runLoad("bare fastify", { url: bare.url, headers: gateway.headers }, settings);
          const withDatabase =
            database &&
            (await runLoad(route.databaseReference!.label, { url: database.url, headers: gateway.headers }, settings));
          const measured = await runLoad(`gateway (${bench.database})`, gateway, settings);
          // Issue 33's goal for the table: against the database reference where there is one, else bare Fastify.
          const tableGoal =
            route.databaseReference ?? (route.goal && { label: "bare fastify", goal: route.goal.ratio });
          if (tableGoal) measured.goal = { figure: "ratio", of: tableGoal.label, atLeast: tableGoal.goal };
          // Requests the load left queued would otherwise meet a closing database on stop.
          await fetch(gateway.url, { headers: gateway.headers });
          const ratio = measured.rps / reference.rps;
          const verdict = route.goal
            ? `(goal >= ${route.goal.ratio}, p99 < ${route.goal.p99Ms} ms): goal ${ratio >= route.goal.ratio && measured.p99 < route.goal.p99Ms ? "met" : "NOT met"}`
            : "(no goal: for comparison)";
          const notes = [
            route.description,
            `ratio gateway/bare: ${ratio.toFixed(2)}, gateway p99 ${measured.p99.toFixed(2)} ms at ${settings.connections} connections ${verdict}`,
            `server CPU per answer: gateway ${(measured.cpuPerRequest / reference.cpuPerRequest).toFixed(1)}× bare`,
          ];
          if (withDatabase) {
            const { label, goal } = route.databaseReference!;
            const against = measured.rps / withDatabase.rps;
            notes.push(
              `ratio gateway/${label}: ${against.toFixed(2)} (goal >= ${goal}): goal ${against >= goal ? "met" : "NOT met"}; ` +
                `server CPU per answer: gateway ${(measured.cpuPerRequest / withDatabase.cpuPerRequest).toFixed(1)}× ${label}`,
            );
          }
          return { rows: withDatabase ? [reference, withDatabase, measured] : [reference, measured], notes };
        } finally {
          await bare.close();
          await database?.close();
        }
      } finally {
        await bench.stop();
      }
    },
  };
}

export const gatewayRead = gatewayBenchmark({
  name: "gateway read",
  path: "/network/api/v1/staff/moderators",
  capability: "network.staff.read",
  goal: { ratio: 0.85, p99Ms: 5 },
  description: "the staff list, answered from the service's memory (no database round trip per request)",
});

export const gatewayDatabaseRead = gatewayBenchmark({
  name: "gateway database read",
  path: "/network/internal/identity/resolve?subject=usr_owner1",
  capability: "identity.subject.resolve",
  description: "identity resolve, one indexed query per request (a kit hot read, services/kit/db/reads.ts)",
  databaseReference: { label: "bare fastify + pg", goal: 0.9, start: bareFastifyWithSubjects },
});

/** A realistic staff list (one owner, two admins, three moderators) with their display projections. */
export async function seed(platform: Platform): Promise<void> {
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
  for (const [subject, role, capabilities] of staff) {
    await admin.upsertSubject(
      { id: subject, display: { displayName: subject.slice(4), handle: subject.slice(4) } },
      options,
    );
    await admin.setStaff({ subject, role, capabilities }, options);
  }
}

/** The reference: Fastify's default JSON serialisation of the gateway's own answer. */
async function bareFastify(body: unknown): Promise<BareServer> {
  const app = Fastify();
  app.get("/staff", async () => body);
  return listening(app, "/staff");
}

/**
 * The reference of identity resolve: bare Fastify running the same indexed
 * query on a `pg` pool of the platform process's size (PF_DB_POOL), with the
 * subject from the query string, answering the gateway's JSON from the row.
 */
async function bareFastifyWithSubjects(databaseUrl: string): Promise<BareServer> {
  const pool = new Pool({ connectionString: databaseUrl, max: loadConfig(process.env).dbPoolSize });
  const app = Fastify();
  app.get<{ Querystring: { subject: string } }>("/resolve", async (request, reply) => {
    const subject = request.query.subject;
    const { rows } = await pool.query<{ id: string; display_name: string; handle: string; avatar_url: string }>(
      "select id, display_name, handle, avatar_url from network.subjects where id = any($1)",
      [[subject]],
    );
    const row = rows[0];
    if (!row) return reply.code(404).send({ code: "identity.not_found" });
    const display = { display_name: row.display_name, handle: row.handle, avatar_url: row.avatar_url };
    const query = { subject, service: "", local_id: "" };
    return { results: [{ query, found: true, subject: { id: row.id, display } }] };
  });
  const server = await listening(app, "/resolve?subject=usr_owner1");
  return {
    url: server.url,
    async close() {
      await server.close();
      await pool.end();
    },
  };
}

async function listening(app: FastifyInstance, path: string): Promise<BareServer> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${path}`, close: () => app.close() };
}
