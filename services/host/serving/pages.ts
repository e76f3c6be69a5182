import type { ServerResponse } from "node:http";

/** A page of the platform's own (no site's): its status, the headers and body built once. */
interface Page {
  status: number;
  headers: readonly string[];
  body: Buffer;
}

function page(status: number, title: string, text: string, extra: string[] = []): Page {
  const body = Buffer.from(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
      `<meta name="viewport" content="width=device-width"></head>` +
      `<body style="font:16px/1.5 system-ui,sans-serif;margin:15vh auto;max-width:32em;padding:0 1em">` +
      `<h1>${title}</h1><p>${text}</p></body></html>\n`,
  );
  const headers = [
    "content-type",
    "text/html; charset=utf-8",
    "content-length",
    String(body.length),
    // What a host serves changes with a deploy, a domain or a takedown: never kept.
    "cache-control",
    "no-store",
    "x-content-type-options",
    "nosniff",
    ...extra,
  ];
  return { status, headers, body };
}

export const pages = {
  notFound: page(404, "Not found", "There is nothing here."),
  noSite: page(404, "No site here", "No site is served at this address."),
  unavailable: page(
    451,
    "Unavailable for legal reasons",
    "This site has been taken down by the platform while it is reviewed.",
  ),
  notAllowed: page(405, "Method not allowed", "Sites answer GET and HEAD only.", ["allow", "GET, HEAD"]),
  failed: page(500, "Something went wrong", "This file could not be read. Try again in a moment."),
  served: page(200, "Served", "This address is served."),
} satisfies Record<string, Page>;

/** Answers one of the pages (its headers only, to a HEAD). */
export function sendPage(res: ServerResponse, which: Page, head: boolean): void {
  res.writeHead(which.status, which.headers as string[]);
  res.end(head ? undefined : which.body);
}
