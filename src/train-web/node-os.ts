/** `node:os` for the train worker: temporary directories live in its in-memory file system. */
export function tmpdir(): string {
  return '/tmp';
}
