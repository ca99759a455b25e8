/**
 * The recipient name check (docs/api/payouts.md#recipient-name-check): the wallet holder's name the
 * provider reports must be the farmer's registered name, compared tolerantly — case, accents,
 * punctuation and the order of the names do not matter, and a middle name one side lacks is allowed.
 */

/** The words of a name: accents removed (NFD, combining marks dropped), lower case, split on anything but letters and digits. */
function nameWords(name: string): string[] {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/**
 * True when `holder` (the provider's account-holder name) names the same person as `registered`
 * (the farmer's registered name): after normalising both, every word of the shorter name is a word
 * of the longer one, and they share at least two words — or both are the same single word. So
 * "WAMALA Joseph" and "Joseph K. Wamala" match "Joseph Wamala"; "Joseph Ssemwogerere" or "Grace
 * Wamala" do not. An empty name never matches.
 */
export function namesMatch(registered: string, holder: string): boolean {
  const a = nameWords(registered);
  const b = nameWords(holder);
  if (a.length === 0 || b.length === 0) return false;
  const [shorter, longer] = a.length <= b.length ? [a, b] : [b, a];
  const pool = [...longer];
  for (const w of shorter) {
    const i = pool.indexOf(w);
    if (i < 0) return false;
    pool.splice(i, 1);
  }
  return shorter.length >= 2 || longer.length === 1;
}
