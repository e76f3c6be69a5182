/** One entry a source answered, as its parser read it (the item the service stores or revises). */
export interface FetchedEntry {
  canonicalUrl: string;
  externalId?: string;
  title: string;
  summary?: string;
  content: string;
  publishedAt?: Date;
  identifiers: Record<string, string>;
  filingType?: string;
}
