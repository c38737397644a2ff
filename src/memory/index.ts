export { SqliteStore, NAMESPACE_SEPARATOR, STORE_TABLE } from "./sqlite-store.js";
export { openPersistence, decisionLogPath, type Persistence } from "./persistence.js";
export {
  saveEpisode,
  recentEpisodes,
  summarizeLessons,
  loadUserConfig,
  saveUserConfig,
  type LessonSummary,
} from "./episodes.js";
