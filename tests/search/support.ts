import type { TestPlatform } from "../support/platform.js";

/** A document's content as an owner writes it (search.index-document@1), public and published unless told. */
export function doc(fields: Record<string, unknown> = {}) {
  return { title: "A document", body: "", public: true, published: true, ...fields };
}

let n = 0;
/** A fresh document id, unique within a run. */
export const freshId = (tag = "d") => `${tag}${Date.now().toString(36)}${(n++).toString(36)}`;

/** A service token that writes its own documents (its slug is its owner). */
export const ownerToken = (t: TestPlatform, service = "coupons") =>
  t.token({ kind: "service", svc: service, caps: ["search.document.write"] });

/** A first-party service token that queries for people (delegate). */
export const delegateToken = (t: TestPlatform, service = "web") =>
  t.token({ kind: "service", svc: service, caps: ["search.query.delegate"] });

/** Puts a document as its owner; answers the write result, failing on any other status than 200. */
export async function put(
  t: TestPlatform,
  token: string,
  path: { owner?: string; type?: string; id: string },
  revision: number,
  document: Record<string, unknown>,
) {
  const { owner = "coupons", type = "code", id } = path;
  const answer = await t.http("PUT", `/search/api/v1/documents/${owner}/${type}/${id}`, {
    token,
    body: { revision: String(revision), document },
  });
  if (answer.status !== 200) throw new Error(`put failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.write;
}

/** A search through the gateway: the query string as given, the token and headers when given. */
export function query(t: TestPlatform, search: string, token?: string, headers: Record<string, string> = {}) {
  return t.http("GET", `/search/api/v1/search?${search}`, { token, headers });
}
