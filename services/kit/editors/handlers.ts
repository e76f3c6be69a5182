import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type EditorEntry,
  EditorEntrySchema,
  type EditorList,
  EditorListSchema,
  type ListEditorsRequest,
  type RemoveEditorRequest,
  type RemoveEditorResponse,
  RemoveEditorResponseSchema,
  type SetEditorRequest,
} from "../../../gen/pf/v1/editors_pb.js";
import { principalOf } from "../auth/principal.js";
import { requireUser } from "../handler/subjects.js";
import type { ServiceContext } from "../service/module.js";
import { addEditor, type EditorRow, listEditors, removeEditor } from "./store.js";

/** The editor-list RPCs of a service's admin service (`SetEditor`, `RemoveEditor`, `ListEditors`). */
export interface EditorHandlers {
  setEditor(request: SetEditorRequest, call: HandlerContext): Promise<EditorEntry>;
  removeEditor(request: RemoveEditorRequest): Promise<RemoveEditorResponse>;
  listEditors(request: ListEditorsRequest): Promise<EditorList>;
}

/** Manages the service's editor list; the admin service's access rule decides who may call. */
export function editorHandlers(ctx: ServiceContext): EditorHandlers {
  return {
    async setEditor(request, call) {
      const subject = requireUser("subject", request.subject);
      const addedBy = principalOf(call).sub;
      const row = await ctx.transaction((em) => addEditor(em, subject, addedBy, ctx.clock.now()));
      return entryOf(row);
    },
    async removeEditor(request) {
      const subject = requireUser("subject", request.subject);
      const removed = await ctx.transaction((em) => removeEditor(em, subject));
      return create(RemoveEditorResponseSchema, { removed });
    },
    async listEditors() {
      const rows = await ctx.transaction((em) => listEditors(em));
      return create(EditorListSchema, { editors: rows.map(entryOf), seeded: [...ctx.editors] });
    },
  };
}

function entryOf(row: EditorRow): EditorEntry {
  return create(EditorEntrySchema, {
    subject: row.subject,
    addedBy: row.addedBy,
    addedAt: timestampFromDate(row.addedAt),
  });
}
