import { createHmac, timingSafeEqual } from "node:crypto";
import { isIPv6 } from "node:net";
import type { Config } from "../runtime/config.js";
import { secretKey } from "../runtime/sealer.js";

/** The request header the gateway sets to the client's address on every call it makes. */
export const CLIENT_IP_HEADER = "pf-client-ip";

/** Beside it, from a gateway calling another process's RPC port: the address's proof (`ClientKeys.proofOf`). */
export const CLIENT_IP_PROOF_HEADER = "pf-client-ip-proof";

/** The calling client's IP address as the gateway saw it; "" for callers that did not come through it. */
export function clientIpOf(header: Headers): string {
  return header.get(CLIENT_IP_HEADER) ?? "";
}

/**
 * Clients counted by address without keeping the address: a keyed hash
 * (HMAC-SHA256 under PF_IP_HASH_KEY) of the client IP as the gateway saw it.
 * An IPv6 client counts by its /64, the block one subscriber usually holds,
 * so changing addresses within it does not dodge a limit.
 */
export class ClientKeys {
  private constructor(private readonly key: Buffer) {}

  static async load(config: Config): Promise<ClientKeys> {
    return new ClientKeys(await secretKey(config, "PF_IP_HASH_KEY", "ip-hash.key"));
  }

  /**
   * What a gateway sends beside `pf-client-ip` when it calls another process's
   * RPC port (CLIENT_IP_PROOF_HEADER): a keyed hash of the address, which only
   * the platform's processes (sharing PF_IP_HASH_KEY) can make.
   */
  proofOf(ip: string): string {
    return createHmac("sha256", this.key).update(`client-ip-proof\n${ip}`).digest("base64url");
  }

  /** Whether a proof is this address's. */
  vouches(ip: string, proof: string): boolean {
    const expected = Buffer.from(this.proofOf(ip));
    const given = Buffer.from(proof);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /**
   * A pseudonym of `value` for one `purpose` (an abuse log's caller or target): a keyed hash under the same key,
   * so every instance makes the same one and only the platform can ask "was it this one?" of a log.
   */
  pseudonymOf(purpose: string, value: string): string {
    return createHmac("sha256", this.key).update(`${purpose}\n${value}`).digest("base64url").slice(0, 22);
  }

  /** The calling client's key: by the address the gateway or the RPC port saw; "" for calls between services in process. */
  of(header: Headers): string {
    const ip = clientIpOf(header);
    if (ip === "") return "";
    return createHmac("sha256", this.key)
      .update(isIPv6(ip) ? ipv6Block(ip) : ip)
      .digest("base64url")
      .slice(0, 22);
  }
}

/** An IPv4 client of a dual-stack listener as plain IPv4 (`::ffff:203.0.113.7` → `203.0.113.7`), so one client has one key. */
export function plainAddress(ip: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? ip.slice(7) : ip;
}

/** The /64 of an IPv6 address: its first four groups, written out in full. */
export function ipv6Block(ip: string): string {
  const [head, tail = ""] = ip.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = ip.includes("::") ? (tail === "" ? [] : tail.split(":")) : [];
  const groups = [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill("0"), ...tailGroups];
  return (
    groups
      .slice(0, 4)
      .map((group) => group.padStart(4, "0").toLowerCase())
      .join(":") + "::/64"
  );
}
