export * from "./request.js";
export * from "./plan.js";
export * from "./feedback.js";
export * from "./revision.js";
export * from "./notification.js";
export * from "./approval.js";
export * from "./report.js";
export * from "./reflection.js";
export {
  CandorConfig,
  DEFAULT_STORAGE_BOUNDS,
  resolveRunSettings,
  SettingName,
  StorageBounds,
  type GraphBounds,
  type ResolvedSettings,
  type SettingSource,
} from "./config.js";
export * from "./plan-state.js";
