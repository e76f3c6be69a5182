import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, expect } from "vitest";
import { startChildMedia, type ChildMedia } from "../media/child.js";
import { CHILD_START_MS } from "../support/child-platform.js";
import { appClaims, BOUNDARY, namespaceUsage, openUploads } from "../media/support.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";
import { until } from "../support/until.js";

const MIB = 1024 * 1024;

// Media in a process of its own, killed with SIGKILL while an upload is half written, then started again: the
// temporary file and the upload's reservation must not stay behind for good (5 × 11.6 MB did, in .tmp, before).
describeWith(DATABASE_SERVER, "a process killed mid-upload and started again", () => {
  let media: ChildMedia;
  beforeAll(async () => {
    media = await startChildMedia();
  }, 60_000 + CHILD_START_MS);
  afterAll(() => media?.stop());

  const temporaryFiles = async () => (await media.blobFiles()).filter((path) => path.includes("/.tmp/"));
  const observed = () => media.observer.platform.contexts.get("media")!;

  itWith(
    DATABASE_SERVER,
    "sweeps the upload's temporary file and gives its reservation back",
    async () => {
      const token = await media.token(appClaims("crashed"));
      const request = httpRequest(`${media.child.gatewayUrl}/media/api/v1/crashed/files`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      });
      request.on("error", () => undefined);
      request.write(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: x/y\r\n\r\n`,
      );
      request.write(Buffer.alloc(3 * MIB, 1));
      await until(async () => (await temporaryFiles()).length === 1);
      await until(async () => (await openUploads(observed(), "crashed")).length === 1);

      await media.child.kill();
      request.destroy();
      // Nothing cleaned up after a kill: the file and the reservation are still there.
      expect(await temporaryFiles()).toHaveLength(1);

      await media.restart({ PF_MEDIA_SWEEP_EVERY_MS: "200", PF_MEDIA_SWEEP_AFTER_MS: "1000" });
      await until(async () => (await temporaryFiles()).length === 0);
      await until(async () => (await openUploads(observed())).length === 0);
      expect(await namespaceUsage(observed(), "crashed")).toEqual({ bytes: 0, files: 0 });
    },
    90_000 + CHILD_START_MS,
  );
});
