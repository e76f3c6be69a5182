/**
 * Text that reads as a recommendation to trade (spec: refused, for every
 * author). A deterministic, case-insensitive phrase list matched on word
 * boundaries (a hyphen binds: "buy-back" and "sell-off" are nouns, not advice;
 * words of a phrase may be joined by spaces or hyphens: "stop-loss").
 */
interface Phrase {
  words: string;
  /** A rating or target a report may state as a past fact ("upgraded the shares to overweight"). */
  reportable: boolean;
}

const RATINGS = [
  "buy",
  "sell",
  "strong buy",
  "strong sell",
  "hold rating",
  "price target",
  "accumulate",
  "overweight",
  "underweight",
  "outperform",
  "underperform",
  "equal weight",
  "top pick",
  "price objective",
];

const IMPERATIVES = [
  "we recommend",
  "i recommend",
  "you should buy",
  "you should sell",
  "you should invest",
  "consider buying",
  "consider selling",
  "go long",
  "go short",
  "take profit",
  "take profits",
  "stop loss",
  "entry point",
  "buy the dip",
  "you should hold",
  "short the stock",
  "short the shares",
  "load up on",
  "add to your position",
  "open a position",
];

export const PHRASES: readonly Phrase[] = [
  ...RATINGS.map((words) => ({ words, reportable: true })),
  ...IMPERATIVES.map((words) => ({ words, reportable: false })),
];

/** Past-tense verbs that report what someone else did: a rating after one of them is a fact, not advice. */
export const REPORTING_VERBS: readonly string[] = [
  "announced",
  "assigned",
  "cut",
  "disclosed",
  "downgraded",
  "initiated",
  "issued",
  "lowered",
  "maintained",
  "named",
  "raised",
  "rated",
  "reiterated",
  "reported",
  "set",
  "upgraded",
];

/** How many words before a rating a reporting verb may stand ("raised their price target"). */
const REPORT_REACH = 6;

const LETTER = String.raw`[\p{L}\p{N}'’-]`;
const patterns = PHRASES.map((phrase) => ({
  phrase,
  regex: new RegExp(String.raw`(?<!${LETTER})${phrase.words.split(" ").join(String.raw`[\s-]+`)}(?!${LETTER})`, "giu"),
}));
const SENTENCE_END = /[.!?;:\n]/;

/** The first phrase of `text` reading as a recommendation to trade, as written, or undefined. */
export function recommendationIn(text: string): string | undefined {
  let first: { at: number; found: string } | undefined;
  for (const { phrase, regex } of patterns) {
    for (const match of text.matchAll(regex)) {
      if (phrase.reportable && reported(text, match.index)) continue;
      if (!first || match.index < first.at) first = { at: match.index, found: match[0] };
      break;
    }
  }
  return first?.found;
}

/** Whether a reporting verb stands among the few words before `at`, in the same sentence. */
function reported(text: string, at: number): boolean {
  const before = text.slice(0, at);
  const sentence = before.slice(lastSentenceEnd(before) + 1);
  const words = sentence.toLowerCase().match(/[\p{L}]+/gu) ?? [];
  return words.slice(-REPORT_REACH).some((word) => REPORTING_VERBS.includes(word));
}

function lastSentenceEnd(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) if (SENTENCE_END.test(text[i])) return i;
  return -1;
}
