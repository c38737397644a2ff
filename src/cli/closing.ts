import { CandorError, ErrorCode, errorMessage } from "../errors.js";

/** What a command opens and must close whatever happens: a session, a persistence, a record reader. */
interface Closable {
  close(): unknown;
}

/** What is being closed, for the message when closing it fails. */
export interface ClosingWhat {
  /** Named in the message, e.g. "the database" or "the session". Default: "the database". */
  what?: string;
  /** The database's path or redacted URL, so a storage fault names it. */
  where?: string;
}

/**
 * Failures that came after the one a command failed with (closing what it had opened), keyed by that first error:
 * `runCli` prints each as a line of its own after the first error's message. Taken (and forgotten) by `runCli`.
 */
const secondary = new Map<unknown, CandorError[]>();

/**
 * Runs `body` with `resource` and closes the resource after it, whatever happened, so that a failure while closing
 * never hides the one before it (a `finally { await x.close() }` rethrows the close error in place of the body's):
 *
 * - the body failed and closing failed too: the body's error is rethrown unchanged; the close failure rides with it
 *   and is printed as a secondary line (`takeSecondaryFailures`);
 * - the body succeeded and closing failed: the close failure is thrown as what it is, a storage fault (a full disk
 *   while the decision log is flushed …) or STORAGE_CLOSE_FAILED, so the command exits 5 saying what was kept.
 */
export async function closing<C extends Closable, T>(
  resource: C,
  body: (resource: C) => Promise<T>,
  names: ClosingWhat = {},
): Promise<T> {
  let result: T;
  try {
    result = await body(resource);
  } catch (e) {
    return closeAfterFailure(resource, e, names);
  }
  const closeFailed = await tryClose(resource, names);
  if (closeFailed) throw closeFailed;
  return result;
}

/**
 * Closes `resource` after `e` was thrown outside a `closing` body (between opening it and handing it on), and
 * rethrows `e` unchanged, a close failure riding with it as in `closing`.
 */
export async function closeAfterFailure(resource: Closable, e: unknown, names: ClosingWhat = {}): Promise<never> {
  const closeFailed = await tryClose(resource, names);
  if (closeFailed) alsoFailed(e, closeFailed);
  throw e;
}

/**
 * Closes each part in turn, whatever the ones before did, and throws the first failure as `closing` would (the
 * storage fault it is, or STORAGE_CLOSE_FAILED), the later ones riding with it as secondary lines.
 */
export async function closeInTurn(parts: readonly (Closable & ClosingWhat)[]): Promise<void> {
  let first: CandorError | null = null;
  for (const part of parts) {
    const failed = await tryClose(part, part);
    if (!failed) continue;
    if (first) alsoFailed(first, failed);
    else first = failed;
  }
  if (first) throw first;
}

/** The failures that followed `e` (see `closing`), once: the caller prints them. */
export function takeSecondaryFailures(e: unknown): CandorError[] {
  const found = secondary.get(e) ?? [];
  secondary.delete(e);
  return found;
}

/** Records that `later` failed after `first`, without replacing it. */
function alsoFailed(first: unknown, later: CandorError): void {
  secondary.set(first, [...(secondary.get(first) ?? []), ...takeSecondaryFailures(later), later]);
}

async function tryClose(resource: Closable, names: ClosingWhat): Promise<CandorError | null> {
  try {
    await resource.close();
    return null;
  } catch (e) {
    return await closeFailure(e, names);
  }
}

/** A close failure as a coded error: the storage fault it is, when it is one, else STORAGE_CLOSE_FAILED. */
async function closeFailure(e: unknown, { what = "the database", where }: ClosingWhat): Promise<CandorError> {
  // Already said by an inner close (a session closes its parts with closeInTurn): not wrapped a second time.
  if (CandorError.isInstance(e) && e.code === ErrorCode.STORAGE_CLOSE_FAILED) return e;
  // Imported here: storage-faults loads zod, which commands that never fail to close should not pay for.
  const { storageFault } = await import("../memory/storage-faults.js");
  const fault = storageFault(e, where);
  if (fault) return fault;
  const named = where === undefined ? what : `${what} (${where})`;
  return new CandorError(
    `Closing ${named} failed after the command's work: ${errorMessage(e)}. What was written before is kept; run the command again to see where the thread stands (\`candor threads\` lists threads).`,
    ErrorCode.STORAGE_CLOSE_FAILED,
    { cause: e, ...(where === undefined ? {} : { details: { dbPath: where } }) },
  );
}
