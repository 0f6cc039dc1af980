/** The binary of `watText` (SIMD on), validated. */
export function watToBinary(fileName: string, watText: string): Promise<Buffer>;
/** The TypeScript source of the module holding `binary`, generated from `watName`. */
export function wasmModuleSource(watName: string, binary: Buffer): string;
