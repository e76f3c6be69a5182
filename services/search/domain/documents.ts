import { SUBJECT } from "../../kit/handler/subjects.js";
import { configOf, isLanguageTag } from "./languages.js";

/** The bounds of one document (README, "Documents"). */
export const LIMITS = {
  title: 500,
  body: 100_000,
  url: 2_000,
  access: 100,
  facetKeys: 20,
  facetValues: 20,
  facetValue: 200,
} as const;

/** A document type within its owner. */
export const TYPE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
/** A document id within owner and type: 1 to ID_MAX of these characters. */
export const ID = /^[A-Za-z0-9_.:@-]+$/;
export const ID_MAX = 200;
/** A facet key. */
export const FACET_KEY = /^[a-z0-9_-]{1,64}$/;
/** An access list entry but a person: a group or an entitlement (names as X-PF-Groups takes them), or a role. */
const NAMED_ACCESS = /^((group|entitlement):[a-zA-Z0-9][a-zA-Z0-9_.:-]{0,127}|role:(member|guest))$/;
/** An access list entry: a person (the one subject grammar), a group, an entitlement or a role; compared exactly. */
const isAccessEntry = (entry: string) => SUBJECT.test(entry) || NAMED_ACCESS.test(entry);

/** A write as it arrives, before any check. */
export interface WriteInput {
  type: string;
  id: string;
  revision: bigint;
  deleted: boolean;
  document?: {
    title: string;
    body: string;
    url: string;
    lang: string;
    access: string[];
    public: boolean;
    published: boolean;
    facets: Record<string, { values: string[] }>;
    publishedAt?: Date;
  };
}

/** A document's content as search stores it. */
export interface DocumentContent {
  title: string;
  body: string;
  url: string;
  lang: string;
  /** The text-search configuration of its language. */
  config: string;
  access: string[];
  public: boolean;
  published: boolean;
  facets: Record<string, string[]>;
  /** `key=value` for each facet value: what filters and counts read. */
  facetPairs: string[];
  publishedAt?: Date;
}

/** A write that passed every check: content unless a tombstone. */
export interface ValidWrite {
  type: string;
  id: string;
  revision: bigint;
  deleted: boolean;
  content?: DocumentContent;
}

/** What is wrong with a write: the field and why. */
export interface Fault {
  field: string;
  detail: string;
}

/** The fault of a write's address (type, id, revision), if any: a batch's writes declare no such rules. */
function addressFault(write: Pick<WriteInput, "type" | "id" | "revision">): Fault | undefined {
  if (!TYPE.test(write.type))
    return { field: "type", detail: "type is 1 to 64 lowercase letters, digits, _ . - (starting alphanumeric)." };
  // Its length is the contract's rule, the batch's too.
  if (!ID.test(write.id)) return { field: "id", detail: `id is 1 to ${ID_MAX} letters, digits and _ . : @ -.` };
  if (write.revision < 1n) return { field: "revision", detail: "revision must be 1 or more." };
  return undefined;
}

/** Checks a write whole: its address, then its content; a tombstone carries none. */
export function checkWrite(write: WriteInput): ValidWrite | Fault {
  const address = addressFault(write);
  if (address) return address;
  const base = { type: write.type, id: write.id, revision: write.revision };
  if (write.deleted) return { ...base, deleted: true };
  const content = checkContent(write.document);
  return "field" in content ? content : { ...base, deleted: false, content };
}

function checkContent(document: WriteInput["document"]): DocumentContent | Fault {
  if (!document) return { field: "document", detail: "document is required." };
  const title = clean(document.title).trim();
  if (title === "" || title.length > LIMITS.title)
    return { field: "document.title", detail: `title is 1 to ${LIMITS.title} characters.` };
  const body = clean(document.body);
  if (body.length > LIMITS.body)
    return { field: "document.body", detail: `body is at most ${LIMITS.body} characters.` };
  if (document.url !== "" && (document.url.length > LIMITS.url || !/^https?:\/\/[^\s/]+\S*$/i.test(document.url)))
    return { field: "document.url", detail: "url is an absolute http(s) URL." };
  if (document.lang !== "" && !isLanguageTag(document.lang))
    return { field: "document.lang", detail: "lang is a BCP 47 tag (en, de-AT)." };
  if (document.access.length > LIMITS.access || !document.access.every(isAccessEntry))
    return {
      field: "document.access",
      detail: `access holds at most ${LIMITS.access} of usr_…, gst_…, group:<name>, entitlement:<name>, role:member, role:guest.`,
    };
  const checked = checkFacets(document.facets);
  if ("field" in checked) return checked;
  const { facets } = checked;
  return {
    title,
    body,
    url: document.url,
    lang: document.lang,
    config: configOf(document.lang),
    access: [...new Set(document.access)],
    public: document.public,
    published: document.published,
    facets,
    facetPairs: Object.entries(facets).flatMap(([key, values]) => values.map((value) => `${key}=${value}`)),
    publishedAt: document.publishedAt,
  };
}

function checkFacets(facets: Record<string, { values: string[] }>): { facets: Record<string, string[]> } | Fault {
  const entries = Object.entries(facets);
  if (entries.length > LIMITS.facetKeys)
    return { field: "document.facets", detail: `at most ${LIMITS.facetKeys} facet keys.` };
  const checked: Record<string, string[]> = {};
  for (const [key, { values }] of entries) {
    const field = `document.facets.${key}`;
    if (!FACET_KEY.test(key)) return { field, detail: "facet keys are 1 to 64 of a-z 0-9 _ -." };
    const kept = [...new Set(values.map((value) => clean(value).trim()))];
    if (kept.length > LIMITS.facetValues || kept.some((value) => value === "" || value.length > LIMITS.facetValue))
      return { field, detail: `at most ${LIMITS.facetValues} values of 1 to ${LIMITS.facetValue} characters.` };
    checked[key] = kept;
  }
  return { facets: checked };
}

/** Text PostgreSQL can hold: NUL is no character of it. */
export function clean(text: string): string {
  return text.replaceAll("\u0000", " ");
}
