import type { EntityManager } from "@mikro-orm/postgresql";
import {
  type ItemChanged,
  ItemChangedSchema,
  type ItemRemoved,
  ItemRemovedSchema,
} from "../../../gen/pf/sources/v1/events_pb.js";
import { type Consumer, type ConsumerHost, consumer } from "./consumer.js";

/** What a service downstream of sources does with its items, in the consumer's transaction. */
export interface SourceItemHandlers<C extends ConsumerHost> {
  /** sources.item.created or sources.item.revised: the item at its new revision. */
  changed(event: ItemChanged, em: EntityManager, ctx: C): Promise<void>;
  /** sources.item.removed: the item is removed upstream (sticky). */
  removed(event: ItemRemoved, em: EntityManager, ctx: C): Promise<void>;
}

/**
 * The three durable consumers of sources' item events, each from the whole stream: `<name>-created` and
 * `<name>-revised` apply the item, `<name>-removed` its removal. They run apart, so a revision may arrive after the
 * removal: `changed` must leave a removed item removed.
 */
export function sourceItemConsumers<C extends ConsumerHost>(
  name: string,
  handlers: SourceItemHandlers<C>,
): Consumer<C>[] {
  const changed = (verb: "created" | "revised") =>
    consumer<C, typeof ItemChangedSchema>({
      name: `${name}-${verb}`,
      subject: `sources.item.${verb}`,
      event: ItemChangedSchema,
      from: "all",
      handle: (event, em, _meta, ctx) => handlers.changed(event, em, ctx),
    });
  const removed = consumer<C, typeof ItemRemovedSchema>({
    name: `${name}-removed`,
    subject: "sources.item.removed",
    event: ItemRemovedSchema,
    from: "all",
    handle: (event, em, _meta, ctx) => handlers.removed(event, em, ctx),
  });
  return [changed("created"), changed("revised"), removed];
}
