import { qualified } from "../../services/kit/db/orm.js";
import type { TestPlatform } from "./platform.js";

/** The events a service's outbox holds, oldest first; with `about`, only those whose payload names that id. */
export async function outboxEvents(
  t: TestPlatform,
  service: string,
  about?: string,
): Promise<{ subject: string; payload: string }[]> {
  const em = t.platform.contexts.get(service)!.orm.em;
  return em
    .getConnection()
    .execute<{ subject: string; payload: string }[]>(
      `select subject, payload from ${qualified(em, "outbox")}${about === undefined ? "" : " where payload like ?"} order by id`,
      about === undefined ? [] : [`%${about}%`],
    );
}
