import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  NotificationPushResultSchema,
  NotificationSchema,
  type NetworkService,
} from "../../../gen/pf/network/v1/network_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { newId } from "../../kit/handler/ids.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { invalid } from "../../kit/handler/problem.js";
import { insertNotifications } from "../db/notifications.js";
import { notificationPushed } from "../events.js";

const MAX_PAYLOAD_BYTES = 16 * 1024;

/** Notification push: stores one notification per network user and publishes network.notification.pushed for each. */
export function notificationHandlers(
  ctx: ServiceContext,
): Pick<ServiceImpl<typeof NetworkService>, "pushNotification"> {
  return {
    async pushNotification(request, call) {
      if (request.title === "" && request.body === "")
        throw invalid("title", "A notification needs a title or a body.");
      if (request.link !== "" && !/^(https:\/\/|\/(?!\/))/i.test(request.link)) {
        throw invalid("link", "link must be an https URL or a path starting with /");
      }
      const pushedBy = principalOf(call).sub;
      const idempotency = idempotencyOf(call, request, { scope: `notifications:${pushedBy}` });
      const payload = request.payload ?? {};
      if (Buffer.byteLength(JSON.stringify(payload)) > MAX_PAYLOAD_BYTES) {
        throw invalid("payload", `payload holds at most ${MAX_PAYLOAD_BYTES} bytes of JSON`);
      }

      return ctx.transaction((em) =>
        idempotency.run(em, async () => {
          const at = ctx.clock.now();
          const notifications = [...new Set(request.recipients)].map((recipient) =>
            create(NotificationSchema, {
              id: newId("ntf"),
              recipient,
              kind: request.kind,
              title: request.title,
              body: request.body,
              link: request.link,
              actor: request.actor,
              payload: request.payload,
              createdAt: timestampFromDate(at),
            }),
          );
          await insertNotifications(
            em,
            notifications.map((n) => ({
              id: n.id,
              recipient: n.recipient,
              kind: n.kind,
              title: n.title,
              body: n.body,
              link: n.link,
              actor: n.actor,
              payload,
              pushedBy,
              createdAt: at,
            })),
          );
          for (const notification of notifications) await notificationPushed(em, notification);
          return create(NotificationPushResultSchema, { notifications });
        }),
      );
    },
  };
}
