import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../../gen/grpc/health/v1/health_pb.js";

/**
 * grpc.health.v1 for probes and tooling: the whole server ("") and every hosted
 * service are SERVING for as long as the process answers at all.
 */
export function healthRoutes(router: ConnectRouter, services: DescService[]): void {
  const known = new Set(["", ...services.map((s) => s.typeName)]);
  router.service(Health, {
    check(req) {
      if (!known.has(req.service)) throw new ConnectError(`unknown service "${req.service}"`, Code.NotFound);
      return { status: Status.SERVING };
    },
    async *watch(req, ctx) {
      // The spec keeps the call open even for an unknown service, which may appear later.
      yield { status: known.has(req.service) ? Status.SERVING : Status.SERVICE_UNKNOWN };
      // Statuses never change while the process runs, so the stream just waits for the client to leave.
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      });
    },
  });
}
