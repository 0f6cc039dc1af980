/**
 * A fixture value a test needs, or a thrown error that says which one is missing: a silent
 * fallback (`?? ""`) would let the test run on an empty value and fail, or pass, for another
 * reason.
 */
export function must<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`The fixture has no ${what}.`);
  return value;
}
