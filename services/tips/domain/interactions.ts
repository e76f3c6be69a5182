import { create } from "@bufbuild/protobuf";
import { InteractionSchema, PaymentMethod, type Interaction } from "../../../gen/pf/tips/v1/interactions_pb.js";

/**
 * A paid message as anyone may read it on a public tip page: what was said,
 * by whom and how much, without the payment's details (billing's intent and
 * transaction, how it was paid), which are the supporter's and creator's.
 */
export function publicMessage(interaction: Interaction): Interaction {
  return create(InteractionSchema, {
    ...interaction,
    intentId: "",
    transactionId: "",
    paymentMethod: PaymentMethod.UNSPECIFIED,
  });
}
