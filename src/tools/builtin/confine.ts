import { randomBytes } from "node:crypto";
import { constants, existsSync } from "node:fs";
import { type FileHandle, link, mkdir, open, readdir, readlink, realpath, stat, unlink } from "node:fs/promises";
import { extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { CandorError, ErrorCode, errorMessage } from "../../errors.js";

/**
 * Path confinement for tools that touch the disk on a user's behalf.
 *
 * Checking a path as text is not enough: a symlink inside the workspace can point anywhere, and a symlink can be
 * swapped in between a check and the call that uses it. So every check here is made on what was actually opened:
 * a file or directory is opened first, and the real path of that open descriptor (`/proc/self/fd/N` on Linux)
 * must lie inside the workspace's real path. Further opens go through the already-checked directory's
 * descriptor, component by component, so no path is resolved twice. Writes go to a new file created exclusively
 * in the checked directory and linked to a name that does not exist yet, so nothing existing is replaced or
 * followed. A file with more than one name (a hard link) is not read unless the caller allows it: another of its
 * names may lie outside the workspace, and no check on the name read can tell.
 */

/** Linux exposes an open descriptor's path; elsewhere a descriptor is matched to a path by device and inode. */
const FD_DIR = "/proc/self/fd";
const HAS_FD_PATHS = existsSync(FD_DIR);

/**
 * How many leading bytes of `bytes` hold whole UTF-8 characters: a multi-byte character cut off at the end is left
 * out (at most 3 bytes), so decoding a cut read does not invent a replacement character.
 */
function wholeCharacters(bytes: Uint8Array): number {
  const end = bytes.length;
  // Walk back over continuation bytes (10xxxxxx) to the lead byte of the last character.
  let lead = end - 1;
  while (lead >= 0 && end - lead < 4 && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead--;
  if (lead < 0) return end;
  const b = bytes[lead] ?? 0;
  const needs = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return end - lead < needs ? lead : end;
}

/** A refusal: the classifier reads `policy_blocked` (no recovery should try to get around a confinement). */
function outside(path: string, root: string, why: string): CandorError {
  return new CandorError(
    `Invalid path "${path}": ${why}, outside the workspace ${root}. Tools only read and write inside it; use a path inside it.`,
    ErrorCode.TOOL_FAILED,
    { details: { failureClass: "policy_blocked", path, root } },
  );
}

/**
 * A failed file-system call's errno code (ENOENT, …) and what it means, read without trusting what was thrown. The
 * message is the code's meaning, never Node's text, which holds the path opened (a `/proc/self/fd` path, or one a
 * symlink led to).
 */
function fsFailure(e: unknown): { code: string | undefined; message: string } {
  const code = typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined;
  if (code === undefined) return { code, message: errorMessage(e) };
  const meaning: Record<string, string> = {
    EACCES: "permission denied",
    EPERM: "operation not permitted",
    ENOSPC: "no space left on the device",
    EDQUOT: "disk quota exceeded",
    EROFS: "the file system is read-only",
    EISDIR: "it is a directory",
    ENOTDIR: "a part of the path is not a directory",
    EMFILE: "too many open files",
    EIO: "an input/output error",
  };
  return { code, message: meaning[code] ?? `the file system said ${code}` };
}

/** True when `child` is `parent` or lies below it (both absolute, normalised). */
function within(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The lexical check: a path inside the root as text, or a coded error (`../x`, `/etc/passwd`). */
export function insideRoot(root: string, path: string): string {
  const full = resolve(root, path);
  if (!within(root, full)) throw outside(path, root, "it points");
  return full;
}

/** Where an open descriptor really is: the kernel's answer on Linux, else a path verified by device and inode. */
async function realPathOf(handle: FileHandle, openedAs: string): Promise<string> {
  if (HAS_FD_PATHS) return readlink(`${FD_DIR}/${handle.fd}`);
  const [real, opened] = await Promise.all([realpath(openedAs), handle.stat()]);
  const now = await stat(real);
  if (now.dev !== opened.dev || now.ino !== opened.ino) throw new Error(`${openedAs} changed while it was opened`);
  return real;
}

/** A path that reaches into an open directory without resolving the directory's path again. */
function through(dir: OpenDir, name: string): string {
  return HAS_FD_PATHS ? `${FD_DIR}/${dir.handle.fd}/${name}` : join(dir.real, name);
}

/** How a ConfinedRoot reads. */
export interface ConfinedRootOptions {
  /** Read files that have more than one name (hard links); off unless the user opts in (CANDOR_ALLOW_HARD_LINKS). */
  allowHardLinks?: boolean;
}

/** The refusal of a hard-linked file: policy_blocked, like any path that may lead outside. */
function hardLinked(path: string, links: number, root: string): CandorError {
  return new CandorError(
    `Refused "${path}": it is a hard link (the file has ${links} names), and another of its names may lie outside the workspace ${root}, so it was not read. If every name of it is yours to read, set CANDOR_ALLOW_HARD_LINKS=1 to allow hard-linked files.`,
    ErrorCode.TOOL_FAILED,
    { details: { failureClass: "policy_blocked", path, root, reason: "hard_link", links } },
  );
}

interface OpenDir {
  handle: FileHandle;
  /** The directory's real path, checked to be inside the workspace. */
  real: string;
}

/**
 * A workspace root resolved once to its real path. Every operation opens what it touches and checks the opened
 * object's real path, so neither a symlink (to a file, to a directory, in any component) nor one swapped in
 * after a check can lead outside.
 */
export class ConfinedRoot {
  private constructor(
    /** The root as the user gave it (for messages). */
    readonly root: string,
    /** Its real path: what every opened object must lie inside. */
    readonly real: string,
    private readonly options: ConfinedRootOptions,
  ) {}

  static async open(root: string, options: ConfinedRootOptions = {}): Promise<ConfinedRoot> {
    const absolute = resolve(root);
    return new ConfinedRoot(absolute, await realpath(absolute), options);
  }

  /** Opens `path` (file or directory) for reading and checks where it really is; the caller closes it. */
  private async openChecked(path: string, flags: number): Promise<{ handle: FileHandle; real: string }> {
    const full = insideRoot(this.root, path);
    const handle = await open(full, flags).catch((e: unknown) => {
      const { code, message } = fsFailure(e);
      if (code === "ENOENT" || code === "ENOTDIR")
        // The step's path is wrong, not the tool: classed so, recovery and learning do not blame read_file for it.
        throw new CandorError(
          `Invalid path "${path}": no such file or directory in ${this.root} (the workspace: the folder Candor was started in). Check the name, or start Candor in the folder that holds it.`,
          ErrorCode.TOOL_FAILED,
          { details: { failureClass: "invalid_parameters", path, reason: "not_found" } },
        );
      if (code === "ELOOP") throw outside(path, this.root, "it is a symlink loop");
      throw new CandorError(`Cannot open "${path}": ${message}.`, ErrorCode.TOOL_FAILED, { cause: e });
    });
    try {
      const real = await realPathOf(handle, full);
      // Where it resolves is not said: naming a path outside the workspace would leak what lies there.
      if (!within(this.real, real)) throw outside(path, this.root, "it leads elsewhere");
      return { handle, real };
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  /**
   * Opens a regular file inside the workspace for reading; the caller closes it. O_NONBLOCK: opening a FIFO must
   * not wait forever for a writer; it is then refused as not a regular file.
   */
  private async openFile(path: string): Promise<{ handle: FileHandle; size: number }> {
    const { handle } = await this.openChecked(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile())
        throw new CandorError(
          `Invalid path "${path}": it is not a regular file in ${this.root}.`,
          ErrorCode.TOOL_FAILED,
          { details: { failureClass: "invalid_parameters", path, reason: "not_a_file" } },
        );
      if (info.nlink > 1 && !this.options.allowHardLinks) throw hardLinked(path, info.nlink, this.root);
      return { handle, size: info.size };
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  /**
   * The text of a regular file inside the workspace, at most `maxBytes` of it (a workspace may hold a file far
   * bigger than a tool should load). A cut falls before a UTF-8 character the cap would split, so the text never
   * ends in a replacement character the file does not have; `read` is how many bytes the text holds, `bytes` the
   * file's size.
   */
  async readText(
    path: string,
    maxBytes = 1_000_000,
  ): Promise<{ text: string; bytes: number; read: number; truncated: boolean }> {
    const { handle, size } = await this.openFile(path);
    try {
      const length = Math.min(size, maxBytes);
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, 0);
      const truncated = size > bytesRead;
      const read = truncated ? wholeCharacters(buffer.subarray(0, bytesRead)) : bytesRead;
      return { text: buffer.subarray(0, read).toString("utf8"), bytes: size, read, truncated };
    } finally {
      await handle.close();
    }
  }

  /**
   * The bytes of a regular file inside the workspace, from the start to its end, in chunks of at most `chunkBytes`:
   * for tools that must go over a whole file without holding it (a count of a file too big to read). Reads through
   * the checked descriptor until end of file, so a file that grows while it is read is read as it grows; stops
   * with the signal's reason when it aborts. One buffer is reused, so memory stays at one chunk whatever the file's
   * size: a chunk is valid until the next is asked for (copy what must be kept).
   */
  async *chunks(path: string, options: { signal?: AbortSignal; chunkBytes?: number } = {}): AsyncGenerator<Buffer> {
    const chunkBytes = options.chunkBytes ?? 1 << 20;
    const { handle } = await this.openFile(path);
    try {
      const buffer = Buffer.allocUnsafe(chunkBytes);
      for (;;) {
        options.signal?.throwIfAborted();
        const { bytesRead } = await handle.read(buffer, 0, chunkBytes, null);
        if (bytesRead === 0) return;
        yield buffer.subarray(0, bytesRead);
      }
    } finally {
      await handle.close();
    }
  }

  /** The entries of a directory inside the workspace (names; a trailing `/` marks directories). */
  async list(dir: string): Promise<{ name: string; isDirectory: boolean; isSymlink: boolean }[]> {
    const opened = await this.openChecked(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      // Read through the descriptor: the directory listed is the one checked, whatever the path now points to.
      const entries = await readdir(through(opened, "."), { withFileTypes: true });
      return entries.map((e) => ({ name: e.name, isDirectory: e.isDirectory(), isSymlink: e.isSymbolicLink() }));
    } finally {
      await opened.handle.close();
    }
  }

  /**
   * Opens (creating when missing) a directory inside the workspace one component at a time, each created and
   * opened through its checked parent's descriptor; a component that is a symlink leading outside is refused.
   */
  private async openDir(path: string): Promise<OpenDir> {
    const full = insideRoot(this.root, path);
    const parts = relative(this.root, full).split(sep).filter(Boolean);
    let current: OpenDir = await this.openChecked(".", constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      for (const part of parts) {
        const next = through(current, part);
        await mkdir(next).catch((e: unknown) => {
          const { code, message } = fsFailure(e);
          if (code !== "EEXIST")
            throw new CandorError(`Cannot create the directory "${path}": ${message}.`, ErrorCode.TOOL_FAILED, {
              cause: e,
            });
        });
        const handle = await open(next, constants.O_RDONLY | constants.O_DIRECTORY).catch((e: unknown) => {
          throw new CandorError(
            `Cannot open the directory "${path}": ${fsFailure(e).message}.`,
            ErrorCode.TOOL_FAILED,
            {
              cause: e,
            },
          );
        });
        const real = await realPathOf(handle, join(current.real, part)).catch(async (e: unknown) => {
          await handle.close();
          throw e;
        });
        await current.handle.close();
        current = { handle, real };
        if (!within(this.real, real)) throw outside(path, this.root, `${part} leads elsewhere`);
      }
      return current;
    } catch (e) {
      await current.handle.close();
      throw e;
    }
  }

  /**
   * Writes `text` to a new file in `dir` inside the workspace, named `name` or, when that name is taken, the first
   * free of `name-2`, `name-3` … (before the extension): an existing file is never replaced, whoever wrote it. The
   * text goes to a temp file created exclusively (never through an existing name or symlink) in the checked
   * directory, which is then hard-linked to the chosen name: link(2) fails on a name that exists, so a file (or a
   * symlink) created there between a check and the write is kept, never followed or overwritten, and a reader
   * never sees half a file. Returns the file's real path and the name used.
   */
  async writeText(dir: string, name: string, text: string): Promise<{ file: string; name: string }> {
    if (name.includes("/") || name.includes(sep) || name === "." || name === "..")
      throw outside(name, this.root, "a file name may not contain a directory");
    const opened = await this.openDir(dir);
    const temp = `.${name}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      const file = await open(
        through(opened, temp),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
      try {
        await file.writeFile(text, "utf8");
        await file.sync();
      } finally {
        await file.close();
      }
      const used = await linkFresh(opened, temp, name, dir);
      return { file: join(opened.real, used), name: used };
    } catch (e) {
      throw CandorError.isInstance(e)
        ? e
        : new CandorError(`Cannot write "${join(dir, name)}": ${fsFailure(e).message}.`, ErrorCode.TOOL_FAILED, {
            cause: e,
          });
    } finally {
      // Best effort: the temp file is gone when its creation is what failed; the error above says what did.
      await unlink(through(opened, temp)).catch(() => undefined);
      await opened.handle.close();
    }
  }
}

/** Most names `writeText` tries (`name`, `name-2` … `name-999`) before it says the folder is full of them. */
const MAX_FRESH_NAMES = 999;

/** Links `temp` in `dir` to `name` or the first free `name-N`, and returns the name used. */
async function linkFresh(dir: OpenDir, temp: string, name: string, shown: string): Promise<string> {
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 1; n <= MAX_FRESH_NAMES; n++) {
    const candidate = n === 1 ? name : `${stem}-${n}${ext}`;
    try {
      await link(through(dir, temp), through(dir, candidate));
      return candidate;
    } catch (e) {
      if (fsFailure(e).code !== "EEXIST") throw e;
    }
  }
  throw new CandorError(
    `Cannot write "${join(shown, name)}": it and ${stem}-2${ext} to ${stem}-${MAX_FRESH_NAMES}${ext} all exist, and an existing file is never replaced. Move or delete some of them.`,
    ErrorCode.TOOL_FAILED,
  );
}
