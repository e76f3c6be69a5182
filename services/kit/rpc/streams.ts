import type { DescService } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";

type StreamHandler = (request: unknown, context: HandlerContext) => AsyncIterable<unknown>;

/**
 * Server-streaming (and bidi-streaming) handlers end when their call is
 * cancelled. Connect's router (the in-memory streaming transport and the RPC
 * port alike) leaves a handler parked at a `yield` nobody reads once its
 * client has gone (a slow reader's, a gateway stream's whose body was full):
 * its `finally` (live listeners, timers) would never run. So each one's
 * generator is returned when its call's signal aborts; one busy at that
 * moment returns at its next `yield`.
 */
export function streamsEndOnCancel<S extends DescService>(
  service: S,
  impl: Partial<ServiceImpl<S>>,
): Partial<ServiceImpl<S>> {
  const streaming = service.methods.filter(
    (method) => method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming",
  );
  if (streaming.length === 0) return impl;
  // Its other handlers are found through it (an impl may keep them on its prototype).
  const wrapped = Object.create(impl) as Record<string, unknown>;
  for (const method of streaming) {
    const handler = (impl as Record<string, StreamHandler | undefined>)[method.localName];
    if (!handler) continue;
    wrapped[method.localName] = (request: unknown, context: HandlerContext) => {
      const messages = handler.call(impl, request, context) as AsyncIterable<unknown> & Partial<AsyncGenerator>;
      const end = () => void messages.return?.(undefined).catch(() => undefined);
      if (context.signal.aborted) end();
      else context.signal.addEventListener("abort", end, { once: true });
      return messages;
    };
  }
  return wrapped as Partial<ServiceImpl<S>>;
}

/** A request stream whose first message an interceptor read already (to check or scope it): that message, then the rest. */
export async function* replayed<M>(first: IteratorResult<M>, rest: AsyncIterator<M>): AsyncIterable<M> {
  if (first.done) return;
  yield first.value;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}
