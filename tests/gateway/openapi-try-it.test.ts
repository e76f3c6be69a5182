import { beforeAll, describe, expect, it } from "vitest";
import { createPaste, expectStatus, person, serviceToken } from "../community/support.js";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["community"] });

type Operation = {
  parameters: { name: string; in: string; example?: unknown }[];
  requestBody: { content: Record<string, { example?: unknown }> };
};
let paths: Record<string, Record<string, Operation>>;

beforeAll(async () => {
  // The document Swagger UI loads for a caller who has not pressed "Authorize" yet.
  paths = expectStatus(await t.http("GET", "/community/openapi.json"), 200).body.paths;
});

/** What "Try it out" sends: the path variables filled in by the caller, the operation's example as the body. */
async function tryIt(verb: string, template: string, values: Record<string, string>, token: string) {
  const operation = paths[template][verb];
  const path = template.replace(/\{([^}]+)\}/g, (_whole, name: string) => encodeURIComponent(values[name]));
  const body = operation.requestBody.content["application/json"].example;
  // Without one, Swagger UI makes a body up from the schema: every property, the path's fields too, had it any.
  expect(body).toBeInstanceOf(Object);
  for (const name of Object.keys(values)) expect(body).not.toHaveProperty(name);
  return t.http(verb.toUpperCase(), `/community${path}`, { token, body });
}

describe("'Try it out' on a POST or PUT with a path variable, with the body the document offers", () => {
  it("forks a paste: the body no longer names the slug the path sets", async () => {
    const owner = person("owner");
    const paste = await createPaste(t, await serviceToken(t), owner);
    const fan = person("fan");
    const fork = await tryIt(
      "post",
      "/api/pastes/{slug}/fork",
      { slug: paste.slug },
      await t.token({ kind: "user", sub: fan }),
    );
    expect(expectStatus(fork, 201).body.paste).toMatchObject({ owner: fan, forked_from: paste.id, title: "example" });
  });

  it("an edit with the example body is refused only for its business reason: the example's revision is not the paste's", async () => {
    const owner = person("owner");
    const paste = await createPaste(t, await serviceToken(t), owner);
    const token = await t.token({ kind: "user", sub: owner });
    const edit = await tryIt("put", "/api/pastes/{slug}", { slug: paste.slug }, token);
    expect(edit).toMatchObject({ status: 412, body: { code: "revision.conflict", revision: "1" } });
  });
});
