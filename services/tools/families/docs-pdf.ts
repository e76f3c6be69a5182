import { readFile } from "node:fs/promises";
import { getDocumentProxy } from "unpdf";
import { DOCS_LIMITS } from "../catalogue/files.js";
import type { DocumentText } from "./docs-text.js";
import { TextBound } from "./docs-text.js";
import { PROGRESS_STEP, type RunStop } from "./job-input.js";
import { ToolFailure } from "./tool.js";

/**
 * A PDF's text with pdf.js (unpdf's build, in this process): only its first `pages` pages are read, whatever its
 * page tree claims (a /Count of a billion costs nothing: pages are found by walking the tree, which pdf.js checks
 * for cycles), the text stops at the bound, and the run's stop is looked at between pages. Fonts are parsed for
 * their glyph maps only; no script runs, nothing is fetched, system fonts are not read.
 */
export async function pdfText(
  path: string,
  pages: number,
  stop: RunStop,
  progress: (percent: number) => Promise<void>,
): Promise<DocumentText> {
  const data = new Uint8Array(await readFile(path));
  const document = await getDocumentProxy(data, {
    verbosity: 0,
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    enableXfa: false,
  }).catch((error: unknown) => {
    throw stop.reason ?? unreadable(error);
  });
  try {
    const declared = document.numPages;
    const toRead = Math.min(declared, pages, DOCS_LIMITS.maxPages);
    const text = new TextBound(DOCS_LIMITS.maxTextChars);
    let read = 0;
    let reported = 0;
    while (read < toRead && !text.full) {
      stop.check();
      const n = read + 1;
      const content = await document
        .getPage(n)
        .then(async (page) => {
          const found = await page.getTextContent();
          page.cleanup();
          return found;
        })
        .catch((error: unknown) => {
          throw stop.reason ?? unreadable(error, n);
        });
      const lines = content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : ""));
      text.add(`${read > 0 ? "\n\n" : ""}${lines.join("").trim()}`);
      read = n;
      const percent = Math.floor(5 + (90 * read) / toRead);
      if (percent - reported >= PROGRESS_STEP) {
        reported = percent;
        await progress(percent);
      }
    }
    return { text: text.text, truncated: text.full || read < declared, pages: declared, pagesRead: read };
  } finally {
    await document.loadingTask.destroy();
  }
}

/** pdf.js's refusal in the caller's words: not a PDF it reads, or encrypted. */
function unreadable(error: unknown, page?: number): ToolFailure {
  const message = error instanceof Error ? error.message : String(error);
  if ((error as { name?: string } | null)?.name === "PasswordException") {
    return new ToolFailure("tools.file.unreadable", "The PDF is encrypted with a password.");
  }
  const where = page === undefined ? "" : ` (page ${page})`;
  return new ToolFailure("tools.file.unreadable", `The PDF cannot be read${where}: ${message.slice(0, 300)}`);
}
