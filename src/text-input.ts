/**
 * Text a person typed (a tool argument, an environment variable), trimmed; absent when it is
 * empty or only spaces, so "" and "  " mean "not given" everywhere alike.
 */
export function blankToUndefined(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}
