import { afterAll, beforeAll, expect } from "vitest";
import { appClaims, BOUNDARY, multipart } from "../media/support.js";
import { startChildMedia, type ChildMedia } from "../media/child.js";
import { CHILD_START_MS } from "../support/child-platform.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";

const MIB = 1024 * 1024;
const TRIES = 20;

// Refusals answered before the body was read, to Node's fetch, which writes a whole body before it reads the answer.
// Closed at once, 7 to 14 of 20 such uploads saw EPIPE instead; the answer and a lingering close reach all 20.
// The platform runs in a process of its own: sharing the test's event loop, the race never shows.
describeWith(DATABASE_SERVER, "uploads refused before their body is read", () => {
  let media: ChildMedia;
  beforeAll(async () => {
    media = await startChildMedia({ PF_MEDIA_MAX_BYTES: String(MIB) });
  }, 60_000 + CHILD_START_MS);
  afterAll(() => media?.stop());

  const body = multipart([{ name: "file", filename: "a.bin", type: "x/y", data: Buffer.alloc(16 * MIB, 1) }]);
  const refusals: [string, number, string, () => Promise<string | undefined>][] = [
    ["without a token", 401, "auth.required", async () => undefined],
    ["without the capability", 403, "auth.capability_missing", () => media.token({ ...appClaims(), caps: [] })],
    ["into another app's namespace", 403, "media.namespace_refused", () => media.token(appClaims("app2"))],
    ["over the service's cap", 413, "media.too_large", () => media.token(appClaims())],
  ];
  for (const [what, status, code, token] of refusals)
    itWith(
      DATABASE_SERVER,
      `answers ${status} ${code} to ${TRIES} of ${TRIES} uploads ${what}`,
      async () => {
        const bearer = await token();
        const seen: string[] = [];
        for (let i = 0; i < TRIES; i++) {
          const answer = await fetch(`${media.child.gatewayUrl}/media/api/v1/app1/files`, {
            method: "POST",
            headers: {
              "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
              ...(bearer && { authorization: `Bearer ${bearer}` }),
            },
            body,
          }).then(
            async (response) => `${response.status} ${((await response.json()) as { code: string }).code}`,
            (error: Error) => `${error.message}: ${String((error.cause as Error | undefined)?.message)}`,
          );
          seen.push(answer);
        }
        expect(seen).toEqual(Array(TRIES).fill(`${status} ${code}`));
      },
      120_000,
    );
});
