// Placeholder until this entry is implemented.
export async function runServer(): Promise<number> {
  process.stderr.write("not implemented yet\n");
  return 1;
}
