/** Why an outbound fetch failed, as a run records it. */
export type OutboundFailure =
  "invalid_url" | "refused_address" | "dns" | "connect" | "timeout" | "too_large" | "too_many_redirects" | "protocol";

/** A failed outbound fetch; `message` says why without any header or credential sent. */
export class OutboundError extends Error {
  constructor(
    readonly failure: OutboundFailure,
    detail: string,
  ) {
    super(detail);
    this.name = "OutboundError";
  }
}
