import { wordsOf } from "./text.js";

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;
const URL = /\bhttps?:\/\/[^\s<>"')\]]+[^\s<>"')\].,;:!?]/;
/** An amount with its currency, else a number standing alone (not part of a code such as A-1042 or a path). */
const AMOUNTS = [
  /[$€£¥]\s?\d{1,3}(?:,\d{3})*(?:\.\d+)?|\b\d{1,3}(?:,\d{3})*(?:\.\d+)?\s?(?:USD|EUR|GBP|JPY|CHF|[$€£¥%])/,
  /(?<![\w/.-])[-+]?\d+(?:[.,]\d+)*(?![\w/-])/,
];
const MONTHS = "january february march april may june july august september october november december".split(" ");
const MONTH = "(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\\.?";
const DATES: { pattern: RegExp; parts: (match: RegExpMatchArray) => [string, string | number, string | number] }[] = [
  { pattern: /\b(\d{4})-(\d{2})-(\d{2})\b/, parts: (m) => [m[1], m[2], m[3]] },
  // Day first, as most of the world writes it: 05/03/2024, 5.3.2024.
  { pattern: /\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b/, parts: (m) => [m[3], m[2], m[1]] },
  { pattern: new RegExp(`\\b(\\d{1,2}) ${MONTH},? (\\d{4})\\b`, "i"), parts: (m) => [m[3], monthOf(m[2]), m[1]] },
  { pattern: new RegExp(`\\b${MONTH} (\\d{1,2}),? (\\d{4})\\b`, "i"), parts: (m) => [m[3], monthOf(m[1]), m[2]] },
];

const monthOf = (name: string): number => MONTHS.findIndex((month) => month.startsWith(name.toLowerCase())) + 1;

/** The first date of a text (the earliest written, whatever its format), as an ISO date (yyyy-mm-dd). */
function dateIn(text: string): string | undefined {
  const found: { at: number; date: string }[] = [];
  for (const { pattern, parts } of DATES) {
    for (const match of text.matchAll(new RegExp(pattern, `${pattern.flags}g`))) {
      const [year, first, second] = parts(match);
      // 12/25/2024 is month first: a "month" past 12 is the day.
      const [month, day] = Number(first) > 12 ? [Number(second), Number(first)] : [Number(first), Number(second)];
      if (month < 1 || month > 12 || day < 1 || day > 31) continue;
      found.push({
        at: match.index,
        date: `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`,
      });
    }
  }
  return found.sort((a, b) => a.at - b.at)[0]?.date;
}

/** A field's name as words (`due_date`, `dueDate`, `Due date` are the same). */
const wordsOfName = (name: string): string[] =>
  wordsOf(name.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[_.-]/g, " ")).map((word) => word.text);

/** The value of a `name: value` line naming the field. */
function labelledValue(text: string, field: string): string | undefined {
  const words = wordsOfName(field);
  if (words.length === 0) return undefined;
  const name = words.join("[\\s_-]*");
  const match = text.match(new RegExp(`^[\\t ]*${name}[\\t ]*[:=][\\t ]*(.+?)[\\t ]*$`, "im"));
  return match?.[1];
}

/** What a field's name says it holds, found by its shape in the text. */
function shapedValue(text: string, field: string): string | undefined {
  const words = wordsOfName(field);
  const names = (...kinds: string[]) => words.some((word) => kinds.includes(word));
  if (names("email", "mail")) return text.match(EMAIL)?.[0];
  if (names("url", "link", "website", "site", "homepage")) return text.match(URL)?.[0];
  if (names("date", "day", "deadline", "due", "when")) return dateIn(text);
  if (names("amount", "price", "total", "cost", "number", "count", "quantity", "value", "fee")) {
    return AMOUNTS.map((pattern) => text.match(pattern)?.[0]).find((amount) => amount !== undefined);
  }
  return undefined;
}

/**
 * Rule-based: a `field: value` line naming the field, else the first email, URL, date (as an ISO date) or amount
 * when the field's name asks for one; null when the text holds none. Values are the text as written.
 */
export function extract(text: string, fields: readonly string[]): Record<string, string | null> {
  return Object.fromEntries(
    fields.map((field) => [field, labelledValue(text, field) ?? shapedValue(text, field) ?? null]),
  );
}
