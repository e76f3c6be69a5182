import { timestampDate } from "@bufbuild/protobuf/wkt";
import { SubjectChangedSchema } from "../../../gen/pf/network/v1/events_pb.js";
import { consumer } from "../../kit/events/consumer.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";
import type { LiveContext } from "../context.js";
import { applySubject } from "../db/channels.js";
import { channelDocumentIds, channelDocuments } from "../db/search.js";
import { channelUsername } from "../domain/channels.js";

/**
 * Network's display projection of people: a person's handle is their channel's username (lower case), their
 * display name and avatar the owner display fields. An older projection never overwrites a newer one.
 */
export const subjectsConsumer = consumer<LiveContext, typeof SubjectChangedSchema>({
  name: "subjects",
  subject: "network.subject.changed",
  event: SubjectChangedSchema,
  from: "all",
  async handle(event, em, _meta, ctx) {
    const subject = event.subject;
    if (!subject?.id.startsWith("usr_")) return;
    const display = subject.display;
    // The document under the old username goes when the handle changes.
    const before = await channelDocumentIds(em, subject.id);
    await applySubject(
      em,
      {
        owner: subject.id,
        username: channelUsername(display?.handle ?? ""),
        displayName: display?.displayName ?? "",
        avatarUrl: display?.avatarUrl ?? "",
      },
      event.occurredAt ? timestampDate(event.occurredAt) : ctx.clock.now(),
    );
    const after = await channelDocumentIds(em, subject.id);
    await refreshSearchDocuments(em, channelDocuments, [...before, ...after], ctx.clock.now());
  },
});
