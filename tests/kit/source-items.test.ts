import { create } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { describe, expect, it } from "vitest";
import { ItemChangedSchema, ItemRemovedSchema } from "../../gen/pf/sources/v1/events_pb.js";
import type { ConsumerHost } from "../../services/kit/events/consumer.js";
import { sourceItemConsumers } from "../../services/kit/events/source-items.js";

describe("the consumers of sources' items", () => {
  it("are three durable consumers from the whole stream, named after the service's prefix", () => {
    const consumers = sourceItemConsumers("documents", { changed: async () => {}, removed: async () => {} });
    expect(consumers.map(({ name, subject, from, event }) => ({ name, subject, from, event: event.typeName }))).toEqual(
      [
        { name: "documents-created", subject: "sources.item.created", from: "all", event: "pf.sources.v1.ItemChanged" },
        { name: "documents-revised", subject: "sources.item.revised", from: "all", event: "pf.sources.v1.ItemChanged" },
        { name: "documents-removed", subject: "sources.item.removed", from: "all", event: "pf.sources.v1.ItemRemoved" },
      ],
    );
  });

  it("hand a created or revised item to `changed` and a removal to `removed`, with the transaction and context", async () => {
    const seen: string[] = [];
    const em = {} as EntityManager;
    const ctx = { key: "trade" } as ConsumerHost;
    const [created, revised, removed] = sourceItemConsumers("items", {
      changed: async (event, inEm, inCtx) => void seen.push(`changed ${event.itemId} ${inEm === em} ${inCtx.key}`),
      removed: async (event, inEm, inCtx) => void seen.push(`removed ${event.reason} ${inEm === em} ${inCtx.key}`),
    });
    const meta = { id: "evt_1", subject: "" };
    await created.handle(create(ItemChangedSchema, { itemId: "itm_1" }), em, meta, ctx);
    await revised.handle(create(ItemChangedSchema, { itemId: "itm_2" }), em, meta, ctx);
    await removed.handle(create(ItemRemovedSchema, { itemId: "itm_1", reason: "gone" }), em, meta, ctx);
    expect(seen).toEqual(["changed itm_1 true trade", "changed itm_2 true trade", "removed gone true trade"]);
  });
});
