/** A token is about four characters of text: the estimate quotas reserve and the context check uses. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The estimate of everything a call sends: each text, summed. */
export function estimateAll(texts: readonly string[]): number {
  return texts.reduce((sum, text) => sum + estimateTokens(text), 0);
}
