/** The operating system and CPUs (several for a universal Mach-O file) a native binary is for. */
export function nativeBinaryPlatform(path: string): {
  os: "linux" | "darwin" | "win32";
  cpus: string[];
};
