/** The binary of `watText` (SIMD on), validated. */
export function watToBinary(fileName: string, watText: string): Promise<Buffer>;
/** `watText` with every `{{NAME}}` replaced by `constants[NAME]`; throws on a name without one. */
export function fillWat(
  fileName: string,
  watText: string,
  constants: Readonly<Record<string, unknown>>,
): string;
/** The binary of the .wat file at `watPath`, its places filled from NAME-layout.ts beside it. */
export function assembleWat(watPath: string): Promise<Buffer>;
/** The TypeScript source of the module holding `binary`, generated from `watName`. */
export function wasmModuleSource(watName: string, binary: Buffer): string;
