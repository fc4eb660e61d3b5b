/**
 * Sets `key` in `map`, first removing the oldest entry when the map already holds
 * `maxEntries` others: a cache that a stream of distinct keys cannot grow past its bound.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, maxEntries: number): void {
  if (map.size >= maxEntries && !map.has(key)) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}

/**
 * Wraps a pure check of a string so that each input is checked once: the answers of the last
 * `maxEntries` distinct inputs are kept.
 */
export function rememberAnswers(check: (input: string) => boolean, maxEntries = 1024): (input: string) => boolean {
  const answers = new Map<string, boolean>();
  return (input) => {
    let answer = answers.get(input);
    if (answer === undefined) {
      answer = check(input);
      setBounded(answers, input, answer, maxEntries);
    }
    return answer;
  };
}
