/** Reads m, t and p from an argon2id PHC string; null for anything else. */
export function phcParameters(phc: string): { memoryCost: number; timeCost: number; parallelism: number } | null {
  const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(phc);
  if (!match) return null;
  return { memoryCost: Number(match[1]), timeCost: Number(match[2]), parallelism: Number(match[3]) };
}
