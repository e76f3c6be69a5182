import { create } from "@bufbuild/protobuf";
import { RevisionDiffSchema, type RevisionDiff as RevisionDiffMessage } from "../../../gen/pf/v1/revisions_pb.js";
import type { RevisionDiff } from "./diff.js";

/** The diff as its proto message (`pf.v1.RevisionDiff`). */
export function revisionDiffToProto(diff: RevisionDiff): RevisionDiffMessage {
  return create(RevisionDiffSchema, diff);
}
