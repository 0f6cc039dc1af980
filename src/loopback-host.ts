import { isIP } from "node:net";

/**
 * True for host names that never leave the machine: `localhost`, 127.0.0.0/8 and ::1. Other
 * `*.localhost` names are not trusted to be loopback: nothing guarantees how they resolve.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || host === "0:0:0:0:0:0:0:1";
  return false;
}
