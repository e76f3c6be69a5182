import { salientSentences } from "./salience.js";
import { frequencies, STOP_WORDS, sentencesOf, termsOf, wordsOf } from "./text.js";

const KEYWORDS = 5;
const ENTITIES = 10;
/** Words a minute, for reading time. */
const READING_SPEED = 200;

/** The commonest short words of each language the vote knows. */
const LANGUAGE_WORDS: Record<string, ReadonlySet<string>> = Object.fromEntries(
  Object.entries({
    en: "the and of to in is that it for was on are with as this be at by not",
    de: "der die das und ist nicht ein eine zu den von mit sich auf für dem des im",
    fr: "le la les et est une des du que pour dans pas sur au avec ce il qui",
    es: "el la los las y es una por que del para con no se en al lo como",
    it: "il la gli le e è una per che di del con non si della sono al come",
    nl: "de het een en van is dat niet op te zijn met voor er aan ook maar",
  }).map(([language, words]) => [language, new Set(words.split(" "))]),
);

/** The language whose common words the text uses most (ties in the list's order), `und` when none. */
export function languageOf(text: string): string {
  const words = wordsOf(text).map((word) => word.text);
  let best = { language: "und", votes: 0 };
  for (const [language, common] of Object.entries(LANGUAGE_WORDS)) {
    const votes = words.filter((word) => common.has(word)).length;
    if (votes > best.votes) best = { language, votes };
  }
  return best.language;
}

/** The most frequent terms, each as the word it was first written as; ties in order of first use. */
function keywordsOf(text: string): string[] {
  const words = wordsOf(text).filter((word) => word.text.length > 1 && !STOP_WORDS.has(word.text));
  const terms = termsOf(text);
  const firstWord = new Map<string, string>();
  terms.forEach((term, index) => firstWord.set(term, firstWord.get(term) ?? words[index].text));
  return [...frequencies(terms)]
    .sort((a, b) => b[1] - a[1])
    .slice(0, KEYWORDS)
    .map(([term]) => firstWord.get(term) ?? term);
}

/**
 * Runs of capitalised words, in order of first use. At a sentence's start a common word is dropped and a lone word
 * not taken: it may be capitalised only for starting the sentence.
 */
function entitiesOf(text: string): string[] {
  const entities = new Set<string>();
  for (const sentence of sentencesOf(text)) {
    for (const match of sentence.text.matchAll(/\p{Lu}[\p{L}\p{N}'’&-]*(?:\s+\p{Lu}[\p{L}\p{N}'’&-]*)*/gu)) {
      let phrase = match[0];
      if (match.index === 0) {
        const [first, ...rest] = phrase.split(/\s+/);
        if (STOP_WORDS.has(first.toLowerCase()) || rest.length === 0) phrase = rest.join(" ");
      }
      if (phrase !== "") entities.add(phrase);
    }
  }
  return [...entities].slice(0, ENTITIES);
}

/** Keywords, entities, language, a one-sentence summary, word count and reading time, computed without a model. */
export function enrich(text: string): Record<string, unknown> {
  return {
    keywords: keywordsOf(text),
    entities: entitiesOf(text),
    language: languageOf(text),
    summary: salientSentences([text], 1)[0]?.sentence.text ?? "",
    ...readingOf(text),
  };
}

/** Word count and reading time: a model cannot miscount them, so remote providers' answers carry them too. */
export function readingOf(text: string): { word_count: number; reading_time_seconds: number } {
  const words = wordsOf(text).length;
  return { word_count: words, reading_time_seconds: Math.ceil((words * 60) / READING_SPEED) };
}
