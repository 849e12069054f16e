/**
 * Append `items` to `target` one by one. `target.push(...items)` passes every item as an argument
 * of one call, and a list the size of a large pack (a constant per rule, a diagnostic per rule)
 * overflows the stack: 100,000 rules made `oarc compile` fail with "Maximum call stack size exceeded".
 */
export function pushAll<T>(target: T[], items: readonly T[]): void {
  for (let i = 0; i < items.length; i++) target.push(items[i] as T);
}
