/**
 * Test doubles and helpers: `import { scriptedModel } from 'durable-agent-sdk/testing'`.
 *
 * @module durable-agent-sdk/testing
 */
export {
  scriptedModel,
  toolCall,
  toolCalls,
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedTurn,
  type ScriptedToolCall,
  type RecordedModelRequest,
} from './scripted-model.js';
export {
  createHookTestEnv,
  type HookTestEnv,
  type HookTestEnvOptions,
  type SessionRef,
} from './hook-test-env.js';
export { replaySessionHistories } from './replay.js';
export {
  fetchSessionHistory,
  fetchSessionHistories,
  readHistoryFile,
  writeHistoryFile,
  type FetchSessionHistoryOptions,
  type HistorySource,
  type SessionHistory,
} from '../history/files.js';
export {
  assertDecision,
  assertDispatched,
  assertDispatchOrder,
  assertSessionStartEndOnce,
  assertToolNeverRan,
  assertToolInput,
  assertModelPrompt,
  type NthOptions,
  type DispatchOrderOptions,
  type ExpectedDecision,
} from './assertions.js';
export {
  scriptedTool,
  type ScriptedTool,
  type ScriptedToolOptions,
  type ScriptedToolResult,
  type RecordedToolCall,
} from './scripted-tool.js';
export type { FaultHandle, FaultTarget } from './faults.js';
export type { HookTestServerKind } from './env-server.js';
export type { DefinitionHooks } from '../definition/registry.js';
export type { SessionLineage } from '../common/workflow-io.js';
export { hookMatchers, type HookMatchers } from './matchers.js';
export {
  assertGoldenSession,
  checkGoldenSession,
  fetchSubagentHistories,
  formatGoldenChanges,
  goldenFromHistories,
  readGoldenSession,
  writeGoldenSession,
  GOLDEN_FORMAT,
  type CheckGoldenOptions,
  type GoldenChange,
  type GoldenDecision,
  type GoldenDispatch,
  type GoldenReport,
  type GoldenSession,
} from './golden.js';
export {
  comparePermissionChecks,
  compareRecording,
  formatGateReport,
  gateDeploy,
  permissionChecksOf,
  sessionHookEventsOf,
  GATE_DEFAULT_LIMIT,
  type CompareRecordingOptions,
  type GateOptions,
  type GatePermissionAnswer,
  type GatePermissionCheck,
  type GatePermissionFlip,
  type GateReport,
  type GateSessionReport,
  type GateUncompared,
  type SubagentPolicies,
} from './gate.js';
export type { HistoryMcpTools } from '../history/timeline-types.js';
