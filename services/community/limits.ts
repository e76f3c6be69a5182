import type { EntityManager } from "@mikro-orm/postgresql";
import type { Author } from "../kit/auth/authorship.js";
import { rateLimit } from "../kit/writes/rate-limit.js";
import type { Rate } from "./settings.js";

/** Counts a write against a person's limit (AI output against its service's): 429 with Retry-After beyond it. */
export function limitWriter(em: EntityManager, name: string, rate: Rate, writer: string, at: Date): Promise<void> {
  return rateLimit(em, [{ name, key: writer, ...rate }], at);
}

/** Who a write counts against: the person, or for AI output its service. */
export const writerOf = (author: Author) =>
  author.kind === "person" ? author.person : author.kind === "ai" ? author.service : author.service;
