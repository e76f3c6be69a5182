import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "./config.js";

/**
 * Seals secrets a service must give back later (AES-256-GCM), so the database
 * never holds them in the clear. Key: PF_SEAL_KEY, or a dev key made on first
 * start under <data>/keys/.
 */
export class Sealer {
  private constructor(private readonly key: Buffer) {}

  static async load(config: Config): Promise<Sealer> {
    return new Sealer(await secretKey(config, "PF_SEAL_KEY", "seal.key"));
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return [iv, cipher.getAuthTag(), sealed].map((part) => part.toString("base64url")).join(".");
  }

  open(sealed: string): string {
    const [iv, tag, body] = sealed.split(".").map((part) => Buffer.from(part, "base64url"));
    const decipher = createDecipheriv("aes-256-gcm", this.key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  }
}

/**
 * A 32-byte key from the environment setting `name`, or, unset, from a dev
 * key made on first start under <data>/keys/<file>. Instances that must agree
 * (sealed secrets, hashed addresses) share it: set it in production.
 */
export async function secretKey(config: Config, name: string, file: string): Promise<Buffer> {
  const configured = config.env[name];
  if (configured) return createHash("sha256").update(configured).digest();
  const path = join(config.dataDir, "keys", file);
  await mkdir(join(config.dataDir, "keys"), { recursive: true });
  await writeFile(path, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" }).catch(() => undefined);
  return createHash("sha256")
    .update(await readFile(path, "utf8"))
    .digest();
}
