import { fromJsonString } from "@bufbuild/protobuf";
import { HostEventSchema } from "../../../gen/pf/host/v1/events_pb.js";
import type { BusMessage } from "../../kit/events/bus.js";
import type { HostContext } from "../context.js";
import { hostSubjects } from "../events.js";
import { hostnameOf, SiteNames, type SiteRoute } from "./hosts.js";
import { Lru } from "../../kit/runtime/lru.js";
import { readManifest, type Manifest } from "./manifest.js";

/** Host names remembered (a site, or none: an unknown name costs one read, not one per request). */
const HOSTS = 10_000;
/** Deploy manifests remembered, and their files in all (a deploy may have up to its quota's, 10,000 by default). */
const MANIFESTS = 256;
const MANIFEST_FILES = 100_000;
/** A backstop for an event missed while the bus was away: a route is read again this long after it was. */
const ROUTE_MAX_AGE_MS = 60_000;

/** Events that change no route: a deploy is served only once activated. */
const IGNORED = new Set<string>([hostSubjects.deployReady, hostSubjects.deployFailed]);

interface Remembered {
  route: SiteRoute | null;
  readAt: number;
}

/**
 * What this instance remembers of the sites: host name → route, deploy → manifest, each bounded (LRU by entries).
 * Every host event (published after its commit) drops the routes at once, on every instance: each subscribes to them
 * (not durably). A read started before an event is not remembered after it (`generation`), so a switch is never lost
 * to a read that raced it. A manifest never changes (deploys are immutable): a deleted deploy's is dropped to free it.
 */
export class ServingCache {
  private readonly routes = new Lru<Remembered>({ maxEntries: HOSTS });
  private readonly manifests = new Lru<Manifest>({
    maxEntries: MANIFESTS,
    maxWeight: MANIFEST_FILES,
    weigh: (manifest) => manifest.size,
  });
  private readonly names: SiteNames;
  private generation = 0;

  constructor(private readonly ctx: HostContext) {
    this.names = new SiteNames(ctx.settings.sitesDomain, ctx.settings.platformDomains);
  }

  /** Subscribes to the host events; answers how to stop. */
  listen(): () => void {
    const stops = Object.values(hostSubjects)
      .filter((subject) => !IGNORED.has(subject))
      .map((subject) => this.ctx.bus.subscribe(subject, (message) => this.changed(message)));
    return () => stops.forEach((stop) => stop());
  }

  /**
   * The route remembered for a Host header as sent (null: none), or undefined when it must be read (`readRoute`).
   * Remembered by the header itself: a request that finds it is not parsed further.
   */
  route(host: string, now: number): SiteRoute | null | undefined {
    const remembered = this.routes.get(host);
    return remembered && now - remembered.readAt < ROUTE_MAX_AGE_MS ? remembered.route : undefined;
  }

  async readRoute(host: string): Promise<SiteRoute | null> {
    const generation = this.generation;
    const readAt = Date.now();
    const route = await this.names.read(this.ctx, hostnameOf(host));
    if (generation === this.generation) this.routes.set(host, { route, readAt });
    return route;
  }

  manifest(deployId: string): Manifest | undefined {
    return this.manifests.get(deployId);
  }

  async readManifest(deployId: string): Promise<Manifest> {
    const manifest = await readManifest(this.ctx, deployId);
    this.manifests.set(deployId, manifest);
    return manifest;
  }

  /** Whether a host name is one the sites answer at (a site's, or a verified custom domain): the TLS `ask`. */
  async serves(hostname: string): Promise<boolean> {
    const route = this.route(hostname, Date.now());
    return (route === undefined ? await this.readRoute(hostname) : route) !== null;
  }

  private changed(message: BusMessage): void {
    this.generation++;
    this.routes.clear();
    if (message.subject !== hostSubjects.deployDeleted) return;
    try {
      const event = fromJsonString(HostEventSchema, new TextDecoder().decode(message.data), {
        ignoreUnknownFields: true,
      });
      this.manifests.delete(event.deployId);
    } catch (error) {
      this.ctx.logger.warn({ err: error, subject: message.subject }, "host event not readable; its manifest kept");
    }
  }
}
