import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from "node:fs";
import { CandorError, type ErrorCode } from "./errors.js";

/**
 * Reading a file by a path someone gave Candor (a flag, an environment variable, a `.env` in the working
 * directory). A path can name anything: a FIFO (a plain read waits forever for a writer), a device, a directory, a
 * file of gigabytes. So the file is opened with O_NONBLOCK (opening a FIFO returns at once instead of waiting),
 * and what was opened, not what the path named a moment before, must be a regular file within a size limit before
 * one byte is read. Messages name the path as it was given, never where it resolved to.
 */

/** Most bytes a configuration file may hold unless the caller says otherwise. */
const MAX_GIVEN_FILE_BYTES = 10_000_000;

/** What kind of thing a stat describes, in words a refusal can use. */
function kindOf(info: Stats): string {
  if (info.isFile()) return "a regular file";
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a named pipe (FIFO)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  if (info.isSymbolicLink()) return "a symbolic link";
  return "not a regular file";
}

/** What a failed open's errno means, without the path Node puts in its message. */
function openFailure(e: unknown): string {
  const code = typeof e === "object" && e !== null && "code" in e ? String(e.code) : "";
  if (code === "ENOENT") return "it does not exist";
  if (code === "ENOTDIR") return "a part of it is not a directory";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "ELOOP") return "it is a symlink loop";
  if (code === "ENXIO") return "it is a socket or a device with nothing behind it";
  return code ? `it cannot be opened (${code})` : "it cannot be opened";
}

export interface GivenFileOptions {
  /** Where the path came from, for the message: "--mcp", "CANDOR_PRICES_FILE", ".env". */
  what: string;
  /** The code of a refusal: CONFIGURATION for settings, INVALID_REQUEST for a command's own argument. */
  code: ErrorCode;
  /** Largest file accepted (default MAX_GIVEN_FILE_BYTES). */
  maxBytes?: number;
  /** The path as the person wrote it, when `path` is it resolved against another directory. */
  given?: string;
}

/**
 * The UTF-8 text of the regular file at `path`, or a coded error naming `options.what` and the path as given:
 * missing, unreadable, not a regular file (a FIFO, a directory, a device) or over the size limit. Never blocks on
 * a FIFO.
 */
export function readGivenFile(path: string, options: GivenFileOptions): string {
  const { what, code } = options;
  const shown = options.given ?? path;
  const maxBytes = options.maxBytes ?? MAX_GIVEN_FILE_BYTES;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    throw new CandorError(`${what} names "${shown}", which cannot be read: ${openFailure(e)}.`, code, {
      cause: e,
      details: { path: shown },
    });
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile())
      throw new CandorError(
        `${what} names "${shown}", which is ${kindOf(info)}, not a regular file, so it was not read. Give a regular file.`,
        code,
        { details: { path: shown, reason: "not_regular_file" } },
      );
    if (info.size > maxBytes)
      throw new CandorError(
        `${what} names "${shown}", a file of ${info.size} bytes; at most ${maxBytes} bytes are read, so it was not read.`,
        code,
        { details: { path: shown, reason: "too_big", bytes: info.size, maxBytes } },
      );
    return readFileSync(fd, "utf8");
  } catch (e) {
    if (CandorError.isInstance(e)) throw e;
    throw new CandorError(`${what} names "${shown}", which cannot be read: ${openFailure(e)}.`, code, {
      cause: e,
      details: { path: shown },
    });
  } finally {
    closeSync(fd);
  }
}
