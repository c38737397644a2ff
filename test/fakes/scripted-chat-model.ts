// The scripted model is part of the package's testing entry (`candor/testing`); the suite keeps importing it here.
export { ScriptedChatModel, type ScriptedTurn } from "../../src/testing.js";
