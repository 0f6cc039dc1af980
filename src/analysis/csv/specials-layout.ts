/**
 * The memory layout of specials.wat, in one place: scripts/build-wasm.mjs writes these
 * numbers into the .wat's `{{NAME}}` places when it assembles the module, and specials.ts
 * makes its views of the module's memory from them. Plain constants only (no imports): the build
 * script loads this file with Node's type stripping.
 */

/** Largest window one `index` call takes: the memory holds this much input, from offset 0. */
export const MAX_WINDOW = 1 << 16;

/** Zero bytes after the window: the last 16-byte load may read past its end. */
export const PADDING = 16;

/** Most fields of a record `record` reads. */
export const KERNEL_FIELDS = 1024;

/** The positions `index` found, as i32 (at most one per byte of the window). */
export const POSITIONS_AT = MAX_WINDOW + PADDING;

/** The fields of the record `record` read: their starts (i32), ends (i32), escaped flags (u8). */
export const STARTS_AT = POSITIONS_AT + 4 * MAX_WINDOW;
export const ENDS_AT = STARTS_AT + 4 * KERNEL_FIELDS;
export const ESCAPED_AT = ENDS_AT + 4 * KERNEL_FIELDS;

/** That record's field count (i32), the offset after its line break (i32), its key hash (i64). */
export const RECORD_AT = ESCAPED_AT + KERNEL_FIELDS;
export const RECORD_END_AT = RECORD_AT + 4;
export const KEY_HASH_AT = RECORD_AT + 8;

/** 64 KiB pages of memory: all of the above, never grown (so views of it stay valid). */
export const PAGES = Math.ceil((KEY_HASH_AT + 8) / 65536);
