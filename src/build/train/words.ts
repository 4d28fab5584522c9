/** The baselines' words: lower-cased runs of letters and digits (and a word's apostrophes). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu) ?? [];
}
