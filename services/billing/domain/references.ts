import { create } from "@bufbuild/protobuf";
import { EntityRefSchema, type EntityRef } from "../../../gen/pf/v1/refs_pb.js";
import { maxLength } from "../../kit/handler/text.js";
import { invalid } from "../../kit/handler/problem.js";

/** An optional reference to what the money is for: all three parts, or none. */
export function requireReference(field: string, reference: EntityRef | undefined): EntityRef | undefined {
  if (reference === undefined) return undefined;
  maxLength(`${field}.service`, reference.service, 40);
  maxLength(`${field}.kind`, reference.kind, 40);
  maxLength(`${field}.id`, reference.id, 100);
  if (reference.service === "" || reference.kind === "" || reference.id === "") {
    throw invalid(field, `${field} names the owning service, the kind and the id.`);
  }
  return reference;
}

/** The reference billing puts on postings for its own records (a cashout, a subscription), which reconciliation follows. */
export function billingReference(kind: string, id: string): EntityRef {
  return create(EntityRefSchema, { service: "billing", kind, id });
}
