import { create, fromJsonString, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { randomUUID } from "node:crypto";
import {
  CommandEventSchema,
  DeviceEventSchema,
  DispatchEventSchema,
  RobotEventSchema,
} from "../../gen/pf/bot/v1/events_pb.js";
import { LinkFrameSchema, type DeviceCaps, type LinkFrame } from "../../gen/pf/bot/v1/link_pb.js";
import type { BusMessage, EventBus } from "../kit/events/bus.js";
import { newId } from "../kit/handler/ids.js";
import { problem } from "../kit/handler/problem.js";
import type { Logger } from "../kit/runtime/logger.js";
import { robotNotFound } from "./db/robots.js";
import { linkSubjects } from "./events.js";

/** Frames waiting for a peer that does not read are bounded: past this many, its link ends (it is not listening). */
const QUEUED_MAX = 1024;

/**
 * Frames to one peer, read in order by one async iteration. It ends once: after a last frame (`end`), with an error
 * (`fail`: the iteration throws it, the stream's problem), or when the call's signal aborts (the peer went away).
 */
export class FrameQueue<T> implements AsyncIterable<T>, AsyncIterator<T> {
  private readonly items: T[] = [];
  /** The read waiting for the next frame (a plain iterator's: an idle link holds one promise, no generator). */
  private waiting?: { resolve: (next: IteratorResult<T>) => void; reject: (error: Error) => void };
  private ended = false;
  private failure?: Error;
  /** Resolves once the queue ends, however it ends. */
  readonly done: Promise<void>;
  private markDone!: () => void;
  /** The one read `orEnded` races against the end (a slot, not a reaction on `done` per read for the link's life). */
  private endWaiter?: () => void;

  constructor(signal: AbortSignal) {
    this.done = new Promise((resolve) => (this.markDone = resolve));
    if (signal.aborted) this.end();
    else signal.addEventListener("abort", () => this.end(), { once: true });
  }

  get closed(): boolean {
    return this.ended;
  }

  push(item: T): void {
    if (this.ended) return;
    if (this.items.length >= QUEUED_MAX) {
      this.fail(problem(408, "bot.link.not_reading", `${QUEUED_MAX} frames wait unread: the link ends.`));
      return;
    }
    const waiting = this.waiting;
    if (!waiting) return void this.items.push(item);
    this.waiting = undefined;
    waiting.resolve({ done: false, value: item });
  }

  /** Ends after what is queued, and `last` if given. */
  end(last?: T): void {
    if (this.ended) return;
    if (last !== undefined) this.items.push(last);
    this.ended = true;
    this.markDone();
    this.endWaiter?.();
    this.endWaiter = undefined;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) void this.next().then(waiting.resolve, waiting.reject);
  }

  /** Ends now: what is queued is dropped and the iteration throws `error`. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.items.length = 0;
    this.failure = error instanceof Error ? error : new Error(String(error));
    this.end();
  }

  /** What `read` gives, or undefined should the queue end first; one such race at a time. */
  orEnded<R>(read: Promise<R>): Promise<R | undefined> {
    if (this.ended) {
      // Nobody awaits the read now: its failure when the call is aborted (the device's frames no longer read) is no
      // news, and left unhandled it would be an unhandled rejection.
      read.catch(() => undefined);
      return Promise.resolve(undefined);
    }
    return new Promise<R | undefined>((resolve, reject) => {
      this.endWaiter = () => resolve(undefined);
      read.then(
        (value) => {
          this.endWaiter = undefined;
          resolve(value);
        },
        (error: unknown) => {
          this.endWaiter = undefined;
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /** Read by one iteration: its own iterator (no closure per link). */
  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ done: false, value: item });
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }
}

/**
 * A change a device's link reacts to with its own reads and writes: frames placed for it (`jobId` the one that
 * was, if one; `frame` its job frame when the dispatch committed on this instance), a cancel asked.
 */
export type LinkNotice = { kind: "placed"; jobId?: string; frame?: LinkFrame } | { kind: "cancel"; jobId: string };

/** One device link this instance holds: the frames to the device, and the order its work is applied in. */
export class DeviceLink {
  readonly id = newId("lnk");
  readonly out: FrameQueue<LinkFrame>;
  /** Jobs whose frame went out on this link (or that the device said it runs): never sent twice. */
  readonly sent = new Set<string>();
  /** What the device advertised in its hello; undefined until then. */
  caps?: DeviceCaps;
  private turn: Promise<void> = Promise.resolve();

  constructor(
    readonly deviceId: string,
    readonly robotId: string,
    signal: AbortSignal,
    private readonly react: (notice: LinkNotice) => Promise<void>,
  ) {
    this.out = new FrameQueue(signal);
  }

  /** Runs `work` after the link's earlier work: device frames and notices are applied one at a time, in order. */
  serial(work: () => Promise<void>): Promise<void> {
    const next = this.turn.then(work);
    this.turn = next.catch(() => undefined);
    return next;
  }

  /** Applies a notice in turn; a failure ends the link with it. */
  notice(notice: LinkNotice): void {
    if (this.out.closed) return;
    this.serial(() => this.react(notice)).catch((error: unknown) => this.out.fail(error));
  }

  send(frame: MessageInitShape<typeof LinkFrameSchema>["frame"]): void {
    this.out.push(create(LinkFrameSchema, { frame }));
  }

  /** Sends `close` with the reason and ends the link: the device does not retry with this credential. */
  close(reason: "revoked" | "rotated" | "deleted"): void {
    this.out.end(create(LinkFrameSchema, { frame: { case: "close", value: { reason } } }));
  }
}

/** An operator channel this instance holds for a robot: told when its e-stop changes, ended when it is deleted. */
export interface ControlListener {
  estop(latched: boolean): void;
  fail(error: ConnectError): void;
}

/**
 * The device links and operator channels this instance holds, and the bus notices that reach them wherever the
 * change was made: revoked, rotated and deleted close a link at once; e-stops and commands go to every link of the
 * robot; a placed frame or a cancel is the device's link's to apply. The notices are bot's own events (written in the
 * transaction of the change, relayed at its commit), heard here without a durable consumer: a link opened after a
 * change reads the change from the database instead (its credential, its waiting frames, the e-stop).
 */
export class LinkHub {
  /** This process's instance, recorded with each link it holds. */
  readonly instance = randomUUID();
  private readonly links = new Map<string, DeviceLink>();
  private readonly channels = new Map<string, Set<ControlListener>>();
  /** Links' opens and ends being recorded: a stopping instance waits for them before its database closes. */
  private readonly recording = new Set<Promise<unknown>>();
  private stopped = false;
  private unsubscribe: (() => void)[] = [];

  constructor(
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  /** Listens to the notices (before the first link: see the worker in workers/links.ts). */
  start(): void {
    if (this.unsubscribe.length > 0) return;
    for (const pattern of ["bot.device.*", "bot.robot.*", "bot.dispatch.*"])
      this.unsubscribe.push(this.bus.subscribe(pattern, (message) => this.heard(message)));
  }

  /**
   * Stops listening, ends every link and channel held (their devices link again, to another instance) and waits for
   * the links' opens and ends being recorded. The ends of links released from now on are the caller's to record,
   * after this (workers/links.ts records every link of the instance in one statement): their handlers may resume
   * only after the database has closed.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const stop of this.unsubscribe) stop();
    this.unsubscribe = [];
    for (const link of this.links.values()) link.out.end();
    this.links.clear();
    for (const listeners of this.channels.values())
      for (const listener of listeners)
        listener.fail(problem(503, "bot.unavailable", "This instance is stopping; open the channel again."));
    this.channels.clear();
    while (this.recording.size > 0) await Promise.all(this.recording);
  }

  /** Holds a device's link; an older link of the device on this instance ends (the device linked again). */
  hold(link: DeviceLink): void {
    const older = this.links.get(link.deviceId);
    if (older && older !== link) older.out.end();
    this.links.set(link.deviceId, link);
  }

  /** Records a link's open: a stopping instance waits for it, so that its stop's record of the link's end follows. */
  recordOpen<T>(record: () => Promise<T>): Promise<T> {
    return this.recorded(record());
  }

  /**
   * Lets an ended link go and records its end (`record` never rejects), unless the instance has stopped; a stopping
   * instance waits for the record.
   */
  async release(link: DeviceLink, record: () => Promise<void>): Promise<void> {
    if (this.links.get(link.deviceId) === link) this.links.delete(link.deviceId);
    if (!this.stopped) await this.recorded(record());
  }

  private recorded<T>(write: Promise<T>): Promise<T> {
    const settled: Promise<unknown> = write.then(
      () => this.recording.delete(settled),
      () => this.recording.delete(settled),
    );
    this.recording.add(settled);
    return write;
  }

  /**
   * A dispatch committed here for a device whose link this instance holds: its frame goes out now, without
   * waiting for its `bot.dispatch.placed` to come back from the bus (which then finds it sent) and without reading
   * it again (the dispatch's transaction found the robot's e-stop clear).
   */
  placed(deviceId: string, jobId: string, frame: LinkFrame): void {
    this.links.get(deviceId)?.notice({ kind: "placed", jobId, frame });
  }

  /**
   * A revoke or a rotate committed here: a link this instance holds for the device closes now, without waiting for
   * the event's way back from the bus (which then finds no link to close).
   */
  close(deviceId: string, reason: "revoked" | "rotated"): void {
    this.links.get(deviceId)?.close(reason);
  }

  /** The links this instance holds now (the presence heartbeat marks their devices as heard from). */
  heldLinkIds(): string[] {
    return [...this.links.values()].map((link) => link.id);
  }

  /** Tells `listener` about the robot's e-stop until the answer is called. */
  listen(robotId: string, listener: ControlListener): () => void {
    let own = this.channels.get(robotId);
    if (!own) this.channels.set(robotId, (own = new Set()));
    own.add(listener);
    return () => {
      own.delete(listener);
      if (own.size === 0 && this.channels.get(robotId) === own) this.channels.delete(robotId);
    };
  }

  private linksOf(robotId: string): DeviceLink[] {
    return [...this.links.values()].filter((link) => link.robotId === robotId);
  }

  private heard(message: BusMessage): void {
    try {
      this.apply(message);
    } catch (error) {
      this.logger.warn({ err: error, subject: message.subject }, "bot link notice not readable; skipped");
    }
  }

  private apply({ subject, data }: BusMessage): void {
    switch (subject) {
      case linkSubjects.deviceConnected: {
        const event = decode(DeviceEventSchema, data);
        const link = this.links.get(event.deviceId);
        if (link && link.id !== event.linkId) link.out.end();
        return;
      }
      case linkSubjects.deviceRevoked:
      case linkSubjects.deviceRotated: {
        const event = decode(DeviceEventSchema, data);
        this.close(event.deviceId, subject === linkSubjects.deviceRevoked ? "revoked" : "rotated");
        return;
      }
      case linkSubjects.robotDeleted: {
        const event = decode(RobotEventSchema, data);
        for (const link of this.linksOf(event.robotId)) link.close("deleted");
        for (const listener of this.channels.get(event.robotId) ?? []) listener.fail(robotNotFound());
        return;
      }
      case linkSubjects.estopLatched:
      case linkSubjects.estopCleared: {
        const event = decode(RobotEventSchema, data);
        const latched = subject === linkSubjects.estopLatched;
        for (const link of this.linksOf(event.robotId)) {
          link.send({ case: "estop", value: { latched } });
          // Frames held back while latched go out once it is cleared.
          if (!latched) link.notice({ kind: "placed" });
        }
        for (const listener of this.channels.get(event.robotId) ?? []) listener.estop(latched);
        return;
      }
      case linkSubjects.commanded: {
        const event = decode(CommandEventSchema, data);
        for (const link of this.linksOf(event.robotId))
          link.send({ case: "command", value: { id: event.commandId, name: event.name, argsJson: event.argsJson } });
        return;
      }
      case linkSubjects.placed:
      case linkSubjects.cancelRequested: {
        const event = decode(DispatchEventSchema, data);
        this.links
          .get(event.nodeId)
          ?.notice(
            subject === linkSubjects.placed
              ? { kind: "placed", jobId: event.jobId }
              : { kind: "cancel", jobId: event.jobId },
          );
        return;
      }
    }
  }
}

function decode<Desc extends DescMessage>(schema: Desc, data: Uint8Array): MessageShape<Desc> {
  return fromJsonString(schema, new TextDecoder().decode(data), { ignoreUnknownFields: true });
}
