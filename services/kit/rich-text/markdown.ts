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

/** Safe HTML of a Markdown source: the only way HTML built from user text leaves the platform. */
export function renderMarkdown(source: string): string {
  return sanitizeHtml(markdown.render(source), SANITIZE);
}

/** The text of a Markdown source without markup (search bodies, feed summaries), whitespace collapsed. */
export function plainText(source: string): string {
  const html = markdown.render(source);
  // Block ends become spaces so paragraphs do not run together.
  const text = sanitizeHtml(html.replace(/<\/(p|h[1-6]|li|blockquote|pre|td|th)>|<br\s*\/?>/g, " $&"), {
    allowedTags: [],
    allowedAttributes: {},
  });
  return decodeEntities(text).replace(/\s+/g, " ").trim();
}

/**
 * A plain-text field (a title) with every HTML tag removed and nothing else
 * changed (Markdown characters stay): markup sent in it never comes back as markup.
 */
export function withoutTags(text: string): string {
  return decodeEntities(sanitizeHtml(text, { allowedTags: [], allowedAttributes: {} }));
}

/** At most `maxChars` characters of the source's plain text, cut at a word with "…" when shortened. */
export function excerpt(source: string, maxChars: number): string {
  const text = plainText(source);
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, Math.max(0, maxChars - 1));
  // A word running on past the cut is left out whole.
  const atWord = /\s/.test(text[cut.length]) ? cut.trimEnd() : cut.replace(/\s+\S*$/, "");
  return `${atWord.length >= cut.length / 2 ? atWord : cut}…`;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" };

/** sanitize-html answers entity-escaped text; plain text is wanted as characters. */
function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ENTITIES[name]);
}
