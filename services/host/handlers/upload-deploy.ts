import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { createHash } from "node:crypto";
import { DeployCreateResultSchema } from "../../../gen/pf/host/v1/deploys_pb.js";
import type { HostService } from "../../../gen/pf/host/v1/host_pb.js";
import { relatedActor } from "../../kit/auth/principal.js";
import { BlobUnavailableError } from "../../kit/blobs/store.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { outsideCall } from "../../kit/runtime/call.js";
import type { HostContext } from "../context.js";
import { heldBlobs } from "../db/blobs.js";
import {
  deployById,
  deployToProto,
  failDeploy,
  openDeploy,
  readyDeploy,
  storageOver,
  type ManifestFile,
} from "../db/deploys.js";
import type { DeployRow } from "../db/entities.js";
import { lockedProject } from "../db/projects.js";
import { siteById } from "../db/sites.js";
import {
  UploadRefused,
  validateUpload,
  type LogLine,
  type UploadLimits,
  type UploadSource,
} from "../domain/archive/index.js";
import { BlobKeeper } from "../domain/blobs.js";
import { uploadOf } from "../domain/upload-messages.js";
import { hostSubjects, recordHostEvent } from "../events.js";
import { underReview } from "./projects.js";

type Handlers = Pick<ServiceImpl<typeof HostService>, "uploadDeploy">;

/**
 * Deploy upload, synchronous: a short transaction opens the deploy `validating` (refused under takedown); the
 * upload is validated as it streams in, outside any transaction, each accepted file stored as a blob (recorded before
 * its bytes are put); one last transaction rechecks the storage quota and makes it ready with its manifest and log.
 * A refused upload is failed with its log (422 host.deploy.invalid, 413 host.quota_exceeded) and any other failure
 * with its reason; nothing of it is referenced, so the sweep frees its blobs.
 */
export function uploadHandlers(ctx: HostContext): Handlers {
  return {
    async uploadDeploy(messages, call) {
      const { siteId, source } = await uploadOf(messages);
      const actor = relatedActor(call);
      const { row, limits } = await ctx.transaction(async (em) => {
        const site = await siteById(em, siteId);
        const project = await lockedProject(em, site.projectId);
        if (project.takenDownAt) throw underReview("Its project");
        if (site.takenDownAt) throw underReview("The site");
        const deploy = { id: newId("dep"), siteId, createdBy: actor, createdAt: ctx.clock.now() };
        return openDeploy(em, project, deploy);
      });
      const upload = new Upload(ctx, row);
      try {
        return create(DeployCreateResultSchema, { deploy: await upload.run(source, limits) });
      } catch (error) {
        throw await upload.fail(error);
      }
    },
  };
}

/** One upload under way: its deploy, the manifest and log it builds. */
class Upload {
  private readonly files: ManifestFile[] = [];
  private readonly log: LogLine[] = [];

  constructor(
    private readonly ctx: HostContext,
    private readonly deploy: DeployRow,
  ) {}

  async run(source: UploadSource, limits: UploadLimits) {
    const { ctx, deploy, files, log } = this;
    const keeper = new BlobKeeper(ctx);
    const { bytes } = await validateUpload(
      source,
      limits,
      async (file) => void files.push(await keeper.keep(file)),
      (line) => log.push(line),
    );
    const digest = manifestDigest(files);
    const named = [
      ...new Set(files.flatMap((file) => [file.digest, ...Object.values(file.encodings).map((e) => e.digest)])),
    ];
    return ctx.transaction(async (em) => {
      // Uploads of a project run side by side: the storage they leave is counted again, the project locked.
      const over = await storageOver(em, deploy.projectId, bytes);
      if (over > 0) {
        const message = `the deploy's ${bytes} bytes take the project ${over} bytes past its storage quota`;
        log.push({ level: "error", path: "", rule: "quota", message });
        throw new UploadRefused("", "quota", message);
      }
      // Held against the sweep until this commits: from then on the deploy names them.
      if ((await heldBlobs(em, named)).size < named.length)
        throw new Error("a file's blob was swept while the upload ran");
      const at = ctx.clock.now();
      if (!(await readyDeploy(em, deploy.id, { files, bytes, digest, at }, log)))
        throw problem(
          404,
          "host.deploy.not_found",
          "The deploy was deleted, or given up as unfinished, while it uploaded.",
        );
      await recordHostEvent(em, hostSubjects.deployReady, this.facts(at));
      return deployToProto((await deployById(em, deploy.id))!);
    });
  }

  /**
   * Fails the deploy with its log and answers the error the caller gets. Written outside the call: a caller gone
   * (the reason it failed, often) must not keep it from committing. A deploy this cannot fail is the sweep's.
   */
  async fail(error: unknown): Promise<unknown> {
    const { ctx, deploy, log } = this;
    const refused = error instanceof UploadRefused ? error : undefined;
    const reason = refused ? refused.message : `the upload did not finish: ${(error as Error).message}`;
    if (!refused) log.push({ level: "error", path: "", rule: "", message: reason });
    await outsideCall(() =>
      ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        if (await failDeploy(em, deploy.id, reason, log, at))
          await recordHostEvent(em, hostSubjects.deployFailed, this.facts(at));
      }),
    ).catch((cause: unknown) =>
      ctx.logger.error({ err: cause, deploy: deploy.id }, "a failed upload stays validating"),
    );
    if (error instanceof BlobUnavailableError) {
      ctx.logger.error({ err: error }, "the blob store failed");
      return problem(
        503,
        "host.store_unavailable",
        "The file store is unavailable; the deploy failed. Try again later.",
      );
    }
    if (!refused) return error;
    const { path, rule } = refused;
    const extras = { deploy_id: deploy.id, path, rule };
    return rule === "quota"
      ? problem(413, "host.quota_exceeded", reason, extras)
      : problem(422, "host.deploy.invalid", reason, extras);
  }

  private facts(at: Date) {
    const { deploy } = this;
    return { projectId: deploy.projectId, siteId: deploy.siteId, deployId: deploy.id, actor: deploy.createdBy, at };
  }
}

/** The SHA-256 of a manifest (path, digest and type of each file, by path): equal deploys have equal digests. */
function manifestDigest(files: ManifestFile[]): string {
  const lines = files.map((file) => [file.path, file.digest, file.contentType]);
  lines.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash("sha256").update(JSON.stringify(lines)).digest("hex");
}
