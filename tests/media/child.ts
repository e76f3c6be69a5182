import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import { startChildPlatform, type ChildPlatform } from "../support/child-platform.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { freePorts } from "../support/ports.js";

/**
 * Media in a process of its own, on a database server both processes reach (`DATABASE_SERVER`; NATS stays in
 * process): a client and a server sharing one event loop never race as real ones do, and a test may SIGKILL it.
 * `observer`, the same service in the test's process on the same database, mints its tokens and reads its rows.
 */
export interface ChildMedia {
  child: ChildPlatform;
  /** The same database, in process: tokens, rows. */
  observer: TestPlatform;
  dataDir: string;
  token(claims: TokenClaims): Promise<string>;
  /** Starts the child again on the same database, data directory and port (after `child.kill()`), `env` over its own. */
  restart(env?: Record<string, string>): Promise<void>;
  /** Every file under the child's blob directory, temporary ones included. */
  blobFiles(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startChildMedia(env: Record<string, string> = {}): Promise<ChildMedia> {
  const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const shared = { PF_JWT_PRIVATE_KEY: key, PF_SEAL_KEY: "child-media-seal", PF_IP_HASH_KEY: "child-media-ip" };
  const observer = await startTestPlatform({ services: ["media"], env: shared });
  const dataDir = await mkdtemp(join(tmpdir(), "pf-child-media-"));
  const settings = {
    ...shared,
    DATABASE_URL: observer.platform.databaseUrl,
    NATS_URL: "",
    PF_SERVICES: "media",
    PF_HTTP_PORT: String((await freePorts(1))[0]),
    PF_RPC_PORT: "0",
    PF_DATA_DIR: dataDir,
    ...env,
  };
  const media: ChildMedia = {
    child: await startChildPlatform(settings),
    observer,
    dataDir,
    token: (claims) => observer.token(claims),
    async restart(env = {}) {
      media.child = await startChildPlatform({ ...settings, ...env });
    },
    async blobFiles() {
      const entries = await readdir(join(dataDir, "blobs"), { recursive: true, withFileTypes: true }).catch(() => []);
      return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
    },
    async stop() {
      await media.child.stop();
      await observer.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return media;
}
