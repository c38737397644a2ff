import { z } from "zod";
import { CandorError, ErrorCode } from "../../errors.js";
import { databaseMayExist, openDatabase } from "../../memory/persistence.js";
import { describeOp } from "../../reflection/adjustments.js";
import { confirmAdjustment, memoryLines, revokeAdjustment, userMemory } from "../../reflection/memory-view.js";
import { ToolRegistry } from "../../tools/registry.js";
import { storageBoundsOf } from "../../env.js";
import { closing } from "../closing.js";
import { Exit, type CliIo } from "../io.js";
import { CommonFlags, parseFlags, resolveDbPath } from "../options.js";
import { buildToolkits } from "../session.js";

const MemoryFlags = CommonFlags.extend({
  user: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_@-]{1,64}$/, "--user is 1-64 letters, digits, '_', '-' or '@'")
    .optional(),
});

/** Whose memory a listing shows when no --user is given. */
const DEFAULT_USER = "default";

/**
 * `candor memory [--user U] [--json]`: what Candor remembers of a user — adjustments (with ids and the reflection
 * each came from), patterns (occurrences, validity), reflections (scores), episodes. `candor memory revoke <id>`
 * withdraws an adjustment and `candor memory confirm <id>` applies a proposed one, each found by its id alone (`--user`
 * only narrows the search to one user).
 */
export async function memoryCommand(
  action: string | undefined,
  id: string | undefined,
  rawFlags: unknown,
  io: CliIo,
): Promise<Exit> {
  const flags = parseFlags(MemoryFlags, rawFlags);
  if (action !== undefined && action !== "revoke" && action !== "confirm")
    throw new CandorError(
      `"${action}" is not a memory action: use ${io.invokedAs} memory to list, ${io.invokedAs} memory revoke <adjustment id> to withdraw one, or ${io.invokedAs} memory confirm <adjustment id> to apply a proposed one.`,
      ErrorCode.INVALID_REQUEST,
    );
  if (action !== undefined && !id)
    throw new CandorError(
      `Say which adjustment to ${action}: ${io.invokedAs} memory ${action} <id> (the ids are in ${io.invokedAs} memory${flags.user ? ` --user ${flags.user}` : ""}).`,
      ErrorCode.INVALID_REQUEST,
    );
  const dbPath = resolveDbPath(flags.db, io.env);
  if (!databaseMayExist(dbPath)) {
    if (action !== undefined)
      throw new CandorError(
        `There is no Candor database at ${dbPath}, so there is nothing to ${action}.`,
        ErrorCode.INVALID_REQUEST,
      );
    io.err(`No memory yet: there is no Candor database at ${dbPath}.`);
    if (flags.json)
      io.out(
        JSON.stringify(
          {
            userId: flags.user ?? DEFAULT_USER,
            episodes: [],
            reflections: [],
            patterns: [],
            adjustments: [],
            wishes: [],
          },
          null,
          2,
        ),
      );
    return Exit.COMPLETED;
  }
  // Listing only reads (read-only: a database this user may not write is listed all the same); revoke and confirm
  // write, under the environment's bound on stored values.
  const persistence = await openDatabase(dbPath, action ? { bounds: storageBoundsOf(io.env) } : { readOnly: true });
  return closing(
    persistence,
    async () => {
      if (action === "revoke") {
        const { userId, adjustment } = await revokeAdjustment(persistence.store, flags.user, id!);
        if (flags.json) io.out(JSON.stringify({ userId, revoked: adjustment }, null, 2));
        else io.out(`Revoked ${adjustment.id}: later runs of user ${userId} no longer apply it (${adjustment.text}).`);
        return Exit.COMPLETED;
      }
      if (action === "confirm") {
        const { userId, adjustment, superseded } = await confirmAdjustment(persistence.store, flags.user, id!);
        if (flags.json) io.out(JSON.stringify({ userId, confirmed: adjustment, superseded }, null, 2));
        else
          io.out(
            [
              `Confirmed ${adjustment.id}: later runs of user ${userId} apply it (${describeOp(adjustment.op)}). Revoke it with: ${io.invokedAs} memory revoke ${adjustment.id}`,
              ...superseded.map((a) => `It replaces ${a.id} (${describeOp(a.op)}).`),
            ].join("\n"),
          );
        return Exit.COMPLETED;
      }
      const view = await userMemory(
        persistence.store,
        flags.user ?? DEFAULT_USER,
        ToolRegistry.create(buildToolkits([])),
      );
      io.out(flags.json ? JSON.stringify(view, null, 2) : memoryLines(view).join("\n"));
      return Exit.COMPLETED;
    },
    { where: persistence.dbPath },
  );
}
