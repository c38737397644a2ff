/**
 * Random human decisions for a waiting thread: mostly ones that fit what it waits for, some malformed (a
 * decision it does not take, two at once, broken JSON, a value the step's tool would refuse). Each decision is a
 * list of `resume` flags; the driver adds the thread and the database.
 */
import type { Rng } from "./prng.js";

/** What the driver knows about a waiting thread: read from its checkpoint. */
export interface Waiting {
  kind: string;
  decisions: readonly string[];
  taskId?: string;
  /** The failed step's parameters (escalations). */
  params?: Record<string, unknown>;
  /** What a retry needs to have a chance (infeasible limits). */
  retryWith?: Record<string, unknown>;
}

/** The plan's steps as far as decisions need them. */
export interface PlanView {
  steps: readonly { id: string; tools: readonly string[]; params: Record<string, unknown>; status: string }[];
}

/** Says whether a tool's schema would refuse these parameters (null: unknown tool, cannot tell). */
export type SchemaCheck = (tool: string, params: Record<string, unknown>) => boolean | null;

export interface Move {
  /** `resume` flags, without the thread and --db. */
  args: string[];
  /** A short name for the decision trace. */
  label: string;
  /**
   * The move is not an acceptable answer: the CLI must refuse it (exit 2, nothing changed) or the graph must
   * keep the thread waiting (exit 3, same question).
   */
  malformed: boolean;
  /** Why the move must be refused, when that is known for certain (a value the step's tool would refuse). */
  mustRefuse?: string;
  /** The thread id to address instead of the real one (a typo'd id). */
  thread?: string;
}

const GUIDANCE = [
  "a budget of 5000 dollars is fine",
  "we are 3 people",
  "go to Lisbon instead",
  "skip the activities",
  "use the backup flight provider",
  "keep it cheap",
  "", // becomes a usage error: --replan needs text
];

const flag = (d: string) => `--${d}`;

/** A decision the thread accepts, chosen with weights that favour finishing the run. */
export function validMove(rng: Rng, w: Waiting, plan: PlanView | null, terminating: boolean): Move {
  const offered = new Set(w.decisions);
  const has = (d: string) => offered.has(d);
  if (terminating) {
    // After many rounds, end the run: the first terminal answer the thread accepts.
    for (const d of ["abort", "reject", "deny", "skip"])
      if (has(d)) return { args: [flag(d), "--comment", "chaos: ending the run"], label: d, malformed: false };
  }
  const weights: [string, number][] = (() => {
    switch (w.kind) {
      case "plan_approval":
        return [
          ["approve", 55],
          ["reject", 8],
          ["adjust", 15],
          ["replan", 15],
        ];
      case "tool_approval":
        return [
          ["approve", 70],
          ["deny", 30],
        ];
      case "unknown_outcome":
        return [
          ["retry", 60],
          ["skip", 30],
          ["abort", 10],
        ];
      case "infeasible_constraint":
        return [
          ["retry-set", 35],
          ["replan", 25],
          ["skip", 20],
          ["abort", 10],
        ];
      default:
        return [
          ["retry", 35],
          ["retry-set", 10],
          ["skip", 25],
          ["replan", 15],
          ["abort", 10],
        ];
    }
  })();
  const usable = weights.filter(([d]) => has(d === "retry-set" ? "retry" : d));
  if (usable.length === 0)
    return { args: [flag(w.decisions[0] ?? "abort")], label: w.decisions[0] ?? "abort", malformed: false };
  const choice = rng.weighted(usable);
  const comment = rng.chance(0.2)
    ? ["--comment", rng.pick(["looks fine", "chaos says so", "ünïcödé ✓", "a 'quoted' \"comment\""])]
    : [];
  switch (choice) {
    case "adjust": {
      const edit = numericEdit(rng, plan);
      if (!edit) return { args: ["--approve", ...comment], label: "approve", malformed: false };
      return {
        args: ["--adjust", JSON.stringify([edit]), ...comment],
        label: `adjust ${edit.taskId}.${edit.field}=${JSON.stringify(edit.newValue)}`,
        malformed: false,
      };
    }
    case "replan": {
      const text = rng.pick(GUIDANCE.filter(Boolean));
      const guidance =
        w.kind === "infeasible_constraint" && w.retryWith
          ? `a budget of ${Number(Object.values(w.retryWith)[0]) + 100} dollars is fine`
          : text;
      return { args: ["--replan", guidance, ...comment], label: `replan "${guidance}"`, malformed: false };
    }
    case "retry-set": {
      const set = retrySet(rng, w);
      if (!set)
        return has("skip")
          ? { args: ["--skip", ...comment], label: "skip", malformed: false }
          : { args: ["--abort"], label: "abort", malformed: false };
      return { args: ["--retry", "--set", set, ...comment], label: `retry --set ${set}`, malformed: false };
    }
    default:
      return { args: [flag(choice), ...comment], label: choice, malformed: false };
  }
}

/** A small change to a numeric parameter of a pending step: the kind of edit a person makes. */
function numericEdit(rng: Rng, plan: PlanView | null): { taskId: string; field: string; newValue: number } | null {
  const candidates = (plan?.steps ?? []).flatMap((s) =>
    s.status === "pending"
      ? Object.entries(s.params)
          .filter(([, v]) => typeof v === "number" && Number.isInteger(v) && v > 0 && v < 10_000)
          .map(([k, v]) => ({ s, k, v: v as number }))
      : [],
  );
  if (candidates.length === 0) return null;
  const { s, k, v } = rng.pick(candidates);
  return { taskId: s.id, field: `params.${k}`, newValue: v + rng.pick([1, 2]) };
}

/** A `key=value` for --retry --set: the limit a retry needs, or a changed numeric parameter of the failed step. */
function retrySet(rng: Rng, w: Waiting): string | null {
  const needed = Object.entries(w.retryWith ?? {});
  if (needed.length > 0) {
    const [k, v] = rng.pick(needed);
    return `${k}=${typeof v === "number" ? v + rng.pick([0, 50, 500]) : JSON.stringify(v)}`;
  }
  const numeric = Object.entries(w.params ?? {}).filter(
    ([, v]) => typeof v === "number" && Number.isInteger(v) && v > 0,
  );
  if (numeric.length === 0) return null;
  const [k, v] = rng.pick(numeric);
  return `${k}=${(v as number) + 1}`;
}

/**
 * A malformed answer. Some are refused by the CLI before anything is sent (exit 2); some are sent and must be
 * refused by the graph, which keeps the thread waiting with the reason (exit 3). `check` says which values the
 * step's tool would refuse, so a move that must be refused says so.
 */
export function malformedMove(rng: Rng, w: Waiting, plan: PlanView | null, check: SchemaCheck): Move {
  const notOffered = ["approve", "reject", "skip", "retry", "abort", "deny"].filter((d) => !w.decisions.includes(d));
  const pending = (plan?.steps ?? []).filter((s) => s.status === "pending");
  const kind = rng.weighted<string>([
    ["not-offered", notOffered.length > 0 ? 3 : 0],
    ["two-decisions", 1],
    ["comment-alone", 1],
    ["set-without-retry", 1],
    ["bad-json", 1],
    ["empty-list", 0.5],
    ["empty-replan", 0.5],
    ["set-not-kv", 0.5],
    ["unknown-flag", 0.5],
    ["unknown-thread", 0.5],
    ["bad-thread-id", 0.3],
    [
      "adjust-bad-value",
      w.decisions.includes("adjust") && pending.some((s) => Object.keys(s.params).length > 0) ? 3 : 0,
    ],
    ["adjust-unknown-step", w.decisions.includes("adjust") ? 1 : 0],
    ["adjust-bad-field", w.decisions.includes("adjust") ? 0.5 : 0],
    ["adjust-cycle", w.decisions.includes("adjust") && pending.length > 0 ? 0.5 : 0],
    [
      "retry-bad-value",
      w.decisions.includes("retry") && Object.keys(w.params ?? {}).length > 0 && w.kind !== "unknown_outcome" ? 2 : 0,
    ],
    ["retry-unknown-param", w.decisions.includes("retry") && w.kind !== "unknown_outcome" && w.taskId ? 1 : 0],
  ]);
  const m = (args: string[], extra: Partial<Move> = {}): Move => ({
    args,
    label: `malformed ${kind}: ${args.join(" ")}`,
    malformed: true,
    ...extra,
  });
  switch (kind) {
    case "not-offered":
      return m([flag(rng.pick(notOffered))]);
    case "two-decisions":
      return m(rng.sample(["--approve", "--reject", "--skip", "--abort", "--deny", "--retry"], 2));
    case "comment-alone":
      return m(["--comment", "just a comment"]);
    case "set-without-retry":
      return m([w.decisions.includes("skip") ? "--skip" : "--approve", "--set", "maxPrice=300"]);
    case "bad-json":
      return m([
        "--adjust",
        rng.pick(["{not json", "[{", "'[]'", "null", '{"taskId":1}', "@/nonexistent/adjust.json"]),
      ]);
    case "empty-list":
      return m(["--adjust", "[]"]);
    case "empty-replan":
      return m(["--replan", rng.pick(["", "   "])]);
    case "set-not-kv":
      return m(["--retry", "--set", rng.pick(["noequals", "=5", "1abc=2", ""])]);
    case "unknown-flag":
      return m([rng.pick(["--aprove", "--yes", "--force", "-x"])]);
    case "unknown-thread":
      return m(["--approve"], { thread: "chaos-no-such-thread" });
    case "bad-thread-id":
      return m(["--approve"], { thread: rng.pick(["../etc", "a b", "x".repeat(80), "-"]) });
    case "adjust-bad-value": {
      const withParams = pending.filter((s) => Object.keys(s.params).length > 0);
      const s = rng.pick(withParams);
      const key = rng.pick(Object.keys(s.params));
      const value = rng.pick<unknown>([-5, "three", 1e9, null, 0, -0.5, { nested: true }, "", 1.5]);
      const refused = s.tools[0] ? check(s.tools[0], { ...s.params, [key]: value }) : null;
      return m(
        ["--adjust", JSON.stringify([{ taskId: s.id, field: `params.${key}`, newValue: value }])],
        refused
          ? { mustRefuse: `${s.tools[0]} refuses ${key}=${JSON.stringify(value)}` }
          : { malformed: false, label: `adjust ${s.id}.params.${key}=${JSON.stringify(value)} (the tool accepts it)` },
      );
    }
    case "adjust-unknown-step":
      return m(["--adjust", JSON.stringify([{ taskId: "no_such_step", field: "params.nights", newValue: 3 }])], {
        mustRefuse: "the plan has no step no_such_step",
      });
    case "adjust-bad-field":
      return m(
        [
          "--adjust",
          JSON.stringify([
            {
              taskId: pending[0]?.id ?? "flight",
              field: rng.pick(["status", "result", "__proto__", "params."]),
              newValue: "x",
            },
          ]),
        ],
        { mustRefuse: "not an editable field" },
      );
    case "adjust-cycle": {
      const s = rng.pick(pending);
      return m(["--adjust", JSON.stringify([{ taskId: s.id, field: "dependsOn", newValue: [s.id] }])], {
        mustRefuse: `${s.id} would depend on itself`,
      });
    }
    case "retry-bad-value": {
      const key = rng.pick(Object.keys(w.params ?? {}));
      const value = rng.pick<unknown>([-5, "three", 1e9, 0, -1]);
      const step = plan?.steps.find((s) => s.id === w.taskId);
      const refused = step?.tools[0] ? check(step.tools[0], { ...step.params, [key]: value }) : null;
      const set = `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`;
      return m(
        ["--retry", "--set", set],
        refused
          ? { mustRefuse: `${step?.tools[0]} refuses ${set}` }
          : { malformed: false, label: `retry --set ${set} (the tool accepts it)` },
      );
    }
    case "retry-unknown-param":
      return m(["--retry", "--set", "noSuchParam=1"], { mustRefuse: "the step's tool has no parameter noSuchParam" });
    default:
      return m(["--approve", "--reject"]);
  }
}
