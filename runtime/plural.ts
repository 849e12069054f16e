/** `1 rule`, `2 rules`, `0 rules`: a count and its noun, for messages (nouns with a plain -s plural). */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
