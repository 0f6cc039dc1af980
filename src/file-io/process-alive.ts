/**
 * Whether a process with this PID exists on this machine: `process.kill(pid, 0)` sends nothing;
 * ESRCH means gone, EPERM means it exists but belongs to another user.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
