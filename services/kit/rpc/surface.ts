import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Visibility } from "../../../gen/pf/v1/options_pb.js";
import { routeAccessOf } from "../auth/enforce.js";

/**
 * Whether an RPC is on the public and first-party surface: one of its rules
 * opens it to public or first-party callers. What anyone may discover (the
 * public OpenAPI document, reflection without a service token) and what the
 * gateway's port serves over Connect; internal and partner RPCs stay off it.
 */
export function onPublicSurface(method: DescMethod): boolean {
  return routeAccessOf(method).rules.some(
    (rule) => rule.visibility === Visibility.PUBLIC || rule.visibility === Visibility.FIRST_PARTY,
  );
}

/** The services with an RPC on the public surface. */
export function publicServices(services: readonly DescService[]): DescService[] {
  return services.filter((service) => service.methods.some(onPublicSurface));
}
