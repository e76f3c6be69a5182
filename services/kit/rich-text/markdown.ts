import MarkdownIt from "markdown-it";
import sanitizeHtml from "sanitize-html";

/**
 * Rich text (README "Rich text"): Markdown is what the platform stores, and
 * HTML leaves it only through `renderMarkdown`. markdown-it renders with raw
 * HTML off (a tag in the source comes out as text), and sanitize-html then
 * keeps only an allow-list of tags, attributes and URL schemes, so a bug or
 * plugin in the renderer still cannot let script, event handlers or
 * `javascript:` URLs through.
 */
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false });

/** The tags Markdown produces; nothing else survives. */
const TAGS = [
  "p",
  "br",
  "hr",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "strong",
  "em",
  "s",
  "del",
  "code",
  "pre",
  "blockquote",
  "ul",
  "ol",
  "li",
  "a",
  "img",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
];

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: TAGS,
  allowedAttributes: {
    a: ["href", "title", "rel"],
    img: ["src", "alt", "title"],
    ol: ["start"],
    th: ["style"],
    td: ["style"],
    code: ["class"],
  },
  // Only table alignment, the one style markdown-it writes.
  allowedStyles: { "*": { "text-align": [/^(left|right|center)$/] } },
  allowedClasses: { code: [/^language-[a-z0-9_+-]+$/] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesByTag: { img: ["http", "https"] },
  allowedSchemesAppliedToAttributes: ["href", "src", "cite"],
  allowProtocolRelative: false,
  disallowedTagsMode: "escape",
  transformTags: {
    // User links never pass reputation, are marked as user content, and never hand the opener over.
    a: sanitizeHtml.simpleTransform("a", { rel: "nofollow ugc noopener" }),
  },
};

/**
 * The size budget of a source parsed as Markdown, in characters: the largest body a service takes as Markdown
 * (a blog post's 200,000). A longer source (a paste may hold 512 KiB) is shown as text, never parsed: parsing
 * time grows with the source and, for some shapes, faster than it.
 */
export const MARKDOWN_MAX_CHARS = 200_000;

/**
 * Safe HTML of a Markdown source: the only way HTML built from user text leaves the platform. Synchronous and
 * slow for long sources: readers get it through kit/rich-text/rendering.ts (off the event loop, cached).
 */
export function renderMarkdown(source: string): string {
  if (source.length > MARKDOWN_MAX_CHARS) return preformatted(source);
  return sanitizeHtml(markdown.render(source), SANITIZE);
}

/** A source shown as it is, escaped, where it is not rendered (past the size or time budget). */
export function preformatted(source: string): string {
  return source === "" ? "" : `<pre>${escapeHtml(source)}</pre>`;
}

/** The text of a Markdown source without markup (search bodies, feed summaries), whitespace collapsed. */
export function plainText(source: string): string {
  if (source.length > MARKDOWN_MAX_CHARS) return collapsed(source);
  const html = markdown.render(source);
  // Block ends become spaces so paragraphs do not run together.
  const text = sanitizeHtml(html.replace(/<\/(p|h[1-6]|li|blockquote|pre|td|th)>|<br\s*\/?>/g, " $&"), {
    allowedTags: [],
    allowedAttributes: {},
  });
  return collapsed(decodeEntities(text));
}

/** Text with its whitespace runs made one space. */
export function collapsed(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * A plain-text field (a title) with every HTML tag removed and nothing else
 * changed (Markdown characters stay): markup sent in it never comes back as markup.
 */
export function withoutTags(text: string): string {
  return decodeEntities(sanitizeHtml(text, { allowedTags: [], allowedAttributes: {} }));
}

/**
 * At most `maxChars` characters of the source's plain text, cut at a word with "…" when shortened. Only the
 * source's first `excerptSourceChars(maxChars)` characters are parsed: the excerpt never needs more, however long
 * the source (a reference link defined further down is then shown as typed).
 */
export function excerpt(source: string, maxChars: number): string {
  const text = plainText(source.slice(0, excerptSourceChars(maxChars)));
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, Math.max(0, maxChars - 1));
  // A word running on past the cut is left out whole.
  const atWord = /\s/.test(text[cut.length]) ? cut.trimEnd() : cut.replace(/\s+\S*$/, "");
  return `${atWord.length >= cut.length / 2 ? atWord : cut}…`;
}

/** The characters of a source an excerpt of `maxChars` parses: markup rarely takes more than 15 of every 16. */
export function excerptSourceChars(maxChars: number): number {
  return Math.max(1_000, maxChars * 16);
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" };

/** sanitize-html answers entity-escaped text; plain text is wanted as characters. */
function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ENTITIES[name]);
}
