// Placeholder until this entry is implemented.
export async function runSummarizeCommand(_args: string[]): Promise<number> {
  process.stderr.write("not implemented yet\n");
  return 1;
}
