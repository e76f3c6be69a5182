import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";

const RETRYABLE = new Set(["40001", "40P01"]);

/** One short transaction on a fresh fork, retried on serialization failures and deadlocks. */
export async function inTransaction<T>(orm: MikroORM, work: (em: EntityManager) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await orm.em.fork().transactional((em) => work(em));
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= attempts || code === undefined || !RETRYABLE.has(code)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}
