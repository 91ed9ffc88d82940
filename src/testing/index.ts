/**
 * Test doubles and helpers: `import { scriptedModel } from 'durable-agent-sdk/testing'`.
 *
 * @module
 */
export {
  scriptedModel,
  toolCall,
  toolCalls,
  type ScriptedModel,
  type ScriptedTurn,
  type ScriptedToolCall,
  type RecordedModelRequest,
} from './scripted-model.js';
