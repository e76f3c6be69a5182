import type { ServiceImpl } from "@connectrpc/connect";
import type { ToolsService } from "../../../gen/pf/tools/v1/tools_pb.js";
import type { ToolsContext } from "../context.js";

type Handlers = Pick<
  ServiceImpl<typeof ToolsService>,
  | "createJob"
  | "getJob"
  | "cancelJob"
  | "retryJob"
  | "watchJob"
  | "readJobFile"
  | "putReference"
  | "deleteReference"
>;

/** Jobs of the job tools, each owned by the principal that created it. */
export function jobHandlers(_ctx: ToolsContext): Handlers {
  const todo = (): never => {
    throw new Error("not built yet");
  };
  return {
    createJob: todo,
    getJob: todo,
    cancelJob: todo,
    retryJob: todo,
    watchJob: todo,
    readJobFile: todo,
    putReference: todo,
    deleteReference: todo,
  };
}
