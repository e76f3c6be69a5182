import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/postgresql";
import { CredentialScheme, SourceKind, SourceListSchema } from "../../../gen/pf/sources/v1/registry_pb.js";
import {
  type SourceWriteRequest,
  SourceManageResultSchema,
  SourceReadResultSchema,
} from "../../../gen/pf/sources/v1/requests_pb.js";
import type { SourcesService } from "../../../gen/pf/sources/v1/sources_pb.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { SourcesContext } from "../context.js";
import type { SourceRow } from "../db/entities.js";
import { textOf } from "../db/enums.js";
import {
  changeSource,
  deleteSource,
  findSource,
  hasItems,
  insertSource,
  sourceByKey,
  sourcesPage,
  sourceToProto,
} from "../db/sources.js";
import {
  checkEnableGate,
  hostOf,
  INTERVAL_DEFAULT_S,
  isFetched,
  type Kind,
  requireCredential,
  requireSourceUrl,
  type Scheme,
} from "../domain/sources.js";
import { sourceChanged, type SourceChange } from "../events.js";

type SourceHandlers = Pick<
  ServiceImpl<typeof SourcesService>,
  "listSources" | "getSource" | "createSource" | "updateSource" | "deleteSource"
>;

/** The credential a request sets: a name and a scheme; an empty variable removes it (null). */
function credentialOf(request: SourceWriteRequest) {
  const credential = request.credential;
  if (!credential) return undefined;
  if (credential.variable === "" && credential.scheme === CredentialScheme.UNSPECIFIED && credential.header === "")
    return null;
  return requireCredential(
    credential.variable,
    textOf(CredentialScheme, credential.scheme) as Scheme | undefined,
    credential.header,
  );
}

/** Fields only fetched sources take: a manual source refuses them (never ignored). */
function refuseFetchFields(request: SourceWriteRequest): void {
  if (request.url !== undefined) throw invalid("url", "A manual source has no url.");
  if (request.credential) throw invalid("credential", "A manual source has no credential.");
  if (request.robotsNote !== undefined) throw invalid("robots_note", "A manual source has no robots note.");
  if (request.fetchIntervalSeconds !== undefined)
    throw invalid("fetch_interval_seconds", "A manual source is never fetched.");
}

const sourceExists = (key: string) => problem(409, "source.exists", `A source ${key} exists already.`);

/**
 * The registry: create (disabled unless enabled with its notes), change, enable, disable, delete while it has no
 * items. The enable gate is checked on the row as it would be left, so no path leaves a source enabled without its
 * notes.
 */
export function sourceHandlers(ctx: SourcesContext): SourceHandlers {
  const manageResult = (row: SourceRow) =>
    create(SourceManageResultSchema, { result: { case: "source", value: sourceToProto(row, ctx.clock.now()) } });

  return {
    async listSources(request) {
      const limit = pageLimit(request.limit);
      const after = decodeTextCursor(request.cursor, 1)?.[0];
      const rows = await sourcesPage(
        ctx.orm.em.fork(),
        { kind: textOf(SourceKind, request.kind), enabled: request.enabled, after },
        limit,
      );
      const { items, nextCursor } = page(rows, limit, (row) => [row.key]);
      const now = ctx.clock.now();
      const sources = items.map((row) => sourceToProto(row, now));
      return create(SourceReadResultSchema, {
        result: { case: "sources", value: create(SourceListSchema, { sources, nextCursor }) },
      });
    },

    async getSource(request) {
      const row = await sourceByKey(ctx.orm.em.fork(), request.key);
      return create(SourceReadResultSchema, { result: { case: "source", value: sourceToProto(row, ctx.clock.now()) } });
    },

    async createSource(request) {
      const { key } = request;
      const kind = textOf(SourceKind, request.kind) as Kind;
      let url: URL | undefined;
      if (isFetched(kind)) {
        if (request.url === undefined) throw invalid("url", "A fetched source needs its url.");
        url = requireSourceUrl(request.url);
      } else {
        refuseFetchFields(request);
      }
      const credential = credentialOf(request);
      const at = ctx.clock.now();
      const fields = {
        key,
        kind,
        url: url?.href ?? null,
        host: url ? hostOf(url) : null,
        title: (request.title ?? "").trim(),
        enabled: request.enabled ?? false,
        termsNote: (request.termsNote ?? "").trim(),
        robotsNote: (request.robotsNote ?? "").trim(),
        credentialVariable: credential?.variable ?? null,
        credentialScheme: credential?.scheme ?? null,
        credentialHeader: credential?.header ?? null,
        fetchIntervalSeconds: request.fetchIntervalSeconds ?? INTERVAL_DEFAULT_S,
      };
      checkEnableGate(fields);
      try {
        return await ctx.transaction(async (em) => {
          if (await findSource(em, key)) throw sourceExists(key);
          const row = await insertSource(em, {
            ...fields,
            nextFetchAt: fields.enabled && url ? at : null,
            consecutiveFailures: 0,
            staleReported: false,
            createdAt: at,
            updatedAt: at,
          });
          await sourceChanged(em, sourceToProto(row, at), "created");
          return manageResult(row);
        });
      } catch (error) {
        // Two creates of one key at once: the loser answers as a later one does.
        if (error instanceof UniqueConstraintViolationException) throw sourceExists(key);
        throw error;
      }
    },

    async updateSource(request) {
      const { key } = request;
      const credential = credentialOf(request);
      return ctx.transaction(async (em) => {
        const row = await sourceByKey(em, key, true);
        const at = ctx.clock.now();
        const wasEnabled = row.enabled;
        if (!isFetched(row.kind as Kind)) refuseFetchFields(request);
        if (request.url !== undefined) {
          const url = requireSourceUrl(request.url);
          // The validators of the last success were another URL's.
          if (url.href !== row.url)
            Object.assign(row, { url: url.href, host: hostOf(url), etag: null, lastModified: null });
        }
        if (credential !== undefined) {
          Object.assign(row, {
            credentialVariable: credential?.variable ?? null,
            credentialScheme: credential?.scheme ?? null,
            credentialHeader: credential?.header ?? null,
          });
        }
        if (request.title !== undefined) row.title = request.title.trim();
        if (request.termsNote !== undefined) row.termsNote = request.termsNote.trim();
        if (request.robotsNote !== undefined) row.robotsNote = request.robotsNote.trim();
        if (request.fetchIntervalSeconds !== undefined) row.fetchIntervalSeconds = request.fetchIntervalSeconds;
        if (request.enabled !== undefined) row.enabled = request.enabled;
        checkEnableGate({ ...row, kind: row.kind as Kind });
        // A source enabled again is due at once; its scheduled fetches follow from there.
        if (row.enabled && !wasEnabled && row.url) row.nextFetchAt = at;
        await changeSource(em, row, { updatedAt: at });
        const change: SourceChange = row.enabled === wasEnabled ? "changed" : row.enabled ? "enabled" : "disabled";
        await sourceChanged(em, sourceToProto(row, at), change);
        return manageResult(row);
      });
    },

    async deleteSource(request) {
      const { key } = request;
      return ctx.transaction(async (em) => {
        const row = await sourceByKey(em, key, true);
        // Removed items count: their record is what keeps a removal sticky.
        if (await hasItems(em, key))
          throw problem(409, "source.has_items", "A source with items (removed ones included) cannot be deleted.");
        await deleteSource(em, row);
        const at = ctx.clock.now();
        await sourceChanged(em, sourceToProto(row, at), "deleted");
        return manageResult(row);
      });
    },
  };
}
