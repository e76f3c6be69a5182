import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../services/kit/runtime/config.js";
import { adminQuery, withDatabase } from "../services/kit/db/server.js";
import { startPlatform, type Platform } from "../platform/host.js";
import { createLogger } from "../services/kit/runtime/logger.js";
import { modules } from "../platform/registry.js";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { streamName } from "../services/kit/events/jetstream-bus.js";

/** Per process: two benches at once on one server would otherwise drop each other's database. */
const DATABASE = `pf_bench_${process.pid}`;

/**
 * Per process too, on NATS: another platform on the same server (a second bench, a developer's `npm start`) would
 * otherwise share the bench's durable consumers and take its events (a job's output consumed by the other's run).
 */
const NAMESPACE = process.env.PF_NATS_NAMESPACE || `bench${process.pid}`;

/** Where the bench platform's events travel on NATS: a spec subject on the wire, a service's stream. */
export const benchEvents = {
  subject: (subject: string) => `${NAMESPACE}.${subject}`,
  stream: (prefix: string) => streamName(prefix, NAMESPACE),
};

export interface BenchPlatform {
  platform: Platform;
  gatewayUrl: string;
  /** "embedded PGlite" or "PostgreSQL", for the report. */
  database: string;
  stop(): Promise<void>;
}

/**
 * The whole platform in this process on free ports. With DATABASE_URL it runs
 * on a fresh `pf_bench_<pid>` database of that server, otherwise on the embedded PGlite.
 */
export async function startBenchPlatform(env: Record<string, string> = {}): Promise<BenchPlatform> {
  const server = process.env.DATABASE_URL || undefined;
  const databaseUrl = server ? await recreateDatabase(server) : undefined;
  const dataDir = await mkdtemp(join(tmpdir(), "pf-bench-"));
  const config = loadConfig({
    ...process.env,
    PF_HTTP_PORT: "0",
    PF_RPC_PORT: "0",
    PF_METRICS_PORT: "0",
    PF_HOST_SITES_PORT: "0",
    PF_RESTREAM_RTMP_PORT: "0",
    PF_RESTREAM_PLAYBACK_PORT: "0",
    PF_DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    DATABASE_URL: databaseUrl,
    PF_NATS_NAMESPACE: NAMESPACE,
    ...env,
  });
  const platform = await startPlatform({ config, modules, logger: createLogger(config.logLevel) }).catch(
    async (error: unknown) => {
      await rm(dataDir, { recursive: true, force: true });
      throw error;
    },
  );
  return {
    platform,
    gatewayUrl: platform.gatewayUrl!,
    database: server ? "PostgreSQL" : "embedded PGlite",
    async stop() {
      await platform.stop();
      if (config.natsUrl && !process.env.PF_NATS_NAMESPACE) await deleteStreams(config.natsUrl);
      if (server) await adminQuery(server, `drop database if exists ${DATABASE} with (force)`);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function recreateDatabase(server: string): Promise<string> {
  await adminQuery(server, `drop database if exists ${DATABASE} with (force)`);
  await adminQuery(server, `create database ${DATABASE}`);
  return withDatabase(server, DATABASE);
}

/** Deletes the streams of the bench's own namespace. */
async function deleteStreams(url: string): Promise<void> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const prefix = benchEvents.stream("");
    for await (const name of jsm.streams.names()) if (name.startsWith(prefix)) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}
