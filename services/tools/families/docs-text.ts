/** What docs.process read of a document: its text (bounded), and for a PDF its pages. */
export interface DocumentText {
  text: string;
  /** Whether text was cut at the bound or pages were left unread. */
  truncated: boolean;
  /** Sanitised HTML (DOCX and Markdown, when asked for). */
  html?: string;
  /** PDF: the pages it says it has, and those read. */
  pages?: number;
  pagesRead?: number;
}

/** Text gathered up to a bound of characters: what comes past it is dropped, and `full` says so. */
export class TextBound {
  private parts: string[] = [];
  private length = 0;
  full = false;

  constructor(private readonly max: number) {}

  add(chunk: string): void {
    if (this.full) return;
    const room = this.max - this.length;
    if (chunk.length > room) this.full = true;
    const kept = chunk.length > room ? cut(chunk, room) : chunk;
    this.parts.push(kept);
    this.length += kept.length;
  }

  get text(): string {
    return this.parts.join("");
  }
}

/** A text cut at `max` characters, and whether it was. */
export function bounded(text: string, max: number): { text: string; truncated: boolean } {
  return text.length > max ? { text: cut(text, max), truncated: true } : { text, truncated: false };
}

/** At most `max` characters of a text, never half of a surrogate pair. */
function cut(text: string, max: number): string {
  const end = max > 0 && /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
  return text.slice(0, end);
}
