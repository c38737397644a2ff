import { mkdirSync, statfsSync, statSync, type Stats } from "node:fs";
import path from "node:path";

/**
 * Linux filesystems that hold kernel objects, not files (f_type of statfs). A database cannot live there, and
 * Node's recursive mkdir spins forever under /proc (mkdir says ENOENT, the parent exists, it tries again).
 */
const KERNEL_FILESYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, "proc"],
  [0x62656572, "sysfs"],
  [0x1cd1, "devpts"],
  [0x27e0eb, "cgroup"],
  [0x63677270, "cgroup2"],
  [0x64626720, "debugfs"],
  [0x74726163, "tracefs"],
  [0x73636673, "securityfs"],
  [0xcafe4a11, "bpf"],
  [0x6165676c, "pstore"],
  [0x62656570, "configfs"],
  [0xde5e81e4, "efivarfs"],
  [0xf97cff8c, "selinuxfs"],
  [0x65735543, "fusectl"],
]);

/** The kernel filesystem `dir` is on, or null for a filesystem that stores files (the table is Linux's). */
function kernelFilesystem(dir: string): string | null {
  if (process.platform !== "linux") return null;
  return KERNEL_FILESYSTEMS.get(statfsSync(dir).type) ?? null;
}

/** `dir`'s nearest ancestor that exists (itself if it does), and the missing directories below it, outermost first. */
function existingAncestor(dir: string): { ancestor: string; stats: Stats; missing: string[] } {
  const missing: string[] = [];
  for (let current = dir; ;) {
    try {
      return { ancestor: current, stats: statSync(current), missing };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const parent = path.dirname(current);
      // ENOTDIR: a component above is a file; walking up finds it and says so.
      if ((code !== "ENOENT" && code !== "ENOTDIR") || parent === current) throw e;
      missing.unshift(current);
      current = parent;
    }
  }
}

/**
 * Creates `dir` and its missing parents one level at a time, never with recursive mkdir: walks up to the first
 * directory that exists, requires it to be a directory on a filesystem that stores files, and creates only
 * below it, so every path ends in a directory or a clear error at once.
 */
export function ensureDirectory(dir: string): void {
  const { ancestor, stats, missing } = existingAncestor(path.resolve(dir));
  if (!stats.isDirectory()) throw new Error(`"${ancestor}" is a ${describeKind(stats)}, not a directory`);
  const kernel = kernelFilesystem(ancestor);
  if (kernel) throw new Error(`"${ancestor}" is on ${kernel}, a kernel filesystem that cannot hold files`);
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (e) {
      // Another process may have made it in the meantime; anything else is the OS's reason.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || !statSync(d).isDirectory()) throw e;
    }
  }
}

/** What a path that is not a regular file is, in words. */
export function describeKind(stats: Stats): string {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  if (stats.isFIFO()) return "named pipe";
  if (stats.isCharacterDevice()) return "character device";
  if (stats.isBlockDevice()) return "block device";
  if (stats.isSocket()) return "socket";
  return "special file";
}
