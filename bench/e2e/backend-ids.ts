/**
 * The ids the replay gives its emulators in BACKENDS. The gateway's ring is
 * keyed by backend ids, so the simulator's prediction uses the same ones
 * (sim-prediction.ts): with other ids, new prefixes land elsewhere.
 */
export function emulatorIds(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `emu-${i + 1}`);
}
