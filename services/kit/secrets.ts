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
    const configured = config.env.PF_SEAL_KEY;
    if (configured) return new Sealer(createHash("sha256").update(configured).digest());
    const file = join(config.dataDir, "keys", "seal.key");
    await mkdir(join(config.dataDir, "keys"), { recursive: true });
    await writeFile(file, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" }).catch(() => undefined);
    return new Sealer(createHash("sha256").update(await readFile(file, "utf8")).digest());
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
