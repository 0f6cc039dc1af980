// Which operating system and CPU a native binary (a Node addon, a shared library) is built for,
// read from its header: ELF on Linux, Mach-O on macOS (a universal file lists several CPUs), PE
// on Windows. Used to check that a platform's MCP Bundle carries that platform's DuckDB binding.
import { closeSync, openSync, readSync } from "node:fs";

const ELF_MACHINES = { 62: "x64", 183: "arm64", 3: "ia32", 40: "arm" };
const MACHO_CPUS = { 16777223: "x64", 16777228: "arm64", 7: "ia32" };
const PE_MACHINES = { 34404: "x64", 43620: "arm64", 332: "ia32" };

/** `{ os, cpus }` of the binary at `path`; throws when the header is none of the three. */
export function nativeBinaryPlatform(path) {
  const header = Buffer.alloc(4096);
  const fd = openSync(path, "r");
  let length;
  try {
    length = readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  return platformOfHeader(header.subarray(0, length), path);
}

function platformOfHeader(b, path) {
  if (b.length >= 20 && b.readUInt32BE(0) === 0x7f454c46) {
    const littleEndian = b[5] === 1;
    const machine = littleEndian ? b.readUInt16LE(18) : b.readUInt16BE(18);
    return { os: "linux", cpus: [ELF_MACHINES[machine] ?? `elf-machine-${machine}`] };
  }
  if (b.length >= 8 && (b.readUInt32LE(0) === 0xfeedfacf || b.readUInt32LE(0) === 0xfeedface)) {
    const cpu = b.readUInt32LE(4);
    return { os: "darwin", cpus: [MACHO_CPUS[cpu] ?? `macho-cpu-${cpu}`] };
  }
  if (b.length >= 8 && b.readUInt32BE(0) === 0xcafebabe) {
    const count = b.readUInt32BE(4);
    const cpus = [];
    for (let i = 0; i < count && 8 + i * 20 + 4 <= b.length; i++) {
      const cpu = b.readUInt32BE(8 + i * 20);
      cpus.push(MACHO_CPUS[cpu] ?? `macho-cpu-${cpu}`);
    }
    return { os: "darwin", cpus };
  }
  if (b.length >= 0x40 && b.toString("latin1", 0, 2) === "MZ") {
    const pe = b.readUInt32LE(0x3c);
    if (pe + 6 <= b.length && b.toString("latin1", pe, pe + 4) === "PE\0\0") {
      const machine = b.readUInt16LE(pe + 4);
      return { os: "win32", cpus: [PE_MACHINES[machine] ?? `pe-machine-${machine}`] };
    }
  }
  throw new Error(`${path} is not an ELF, Mach-O or PE binary`);
}
