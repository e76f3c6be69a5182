import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { streamsEndOnCancel } from "./streams.js";

/** One proto service and the object of its methods, as the RPC port and the in-process transport serve it. */
export interface Implementation {
  service: DescService;
  impl: Partial<ServiceImpl<DescService>>;
}

/**
 * Pairs a proto service with its handlers; `ServiceImpl` makes a forgotten RPC
 * a compile error. Its server-streaming handlers end when their call is cancelled.
 */
export function implement<S extends DescService>(service: S, impl: ServiceImpl<S>): Implementation {
  return { service, impl: streamsEndOnCancel(service, impl) as Partial<ServiceImpl<DescService>> };
}
