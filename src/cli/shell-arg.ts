/**
 * Quotes a shell argument only when it needs it. Its own module (render.ts re-exports it) so that usage errors are
 * worded without loading the renderer's schemas.
 */
export function shellArg(arg: string): string {
  if (/^[A-Za-z0-9_./:=@+-]+$/.test(arg)) return arg;
  if (!/["$`\\!]/.test(arg)) return `"${arg}"`;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
