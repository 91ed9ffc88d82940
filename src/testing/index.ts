/**
 * Test doubles and helpers: `import { scriptedModel } from 'durable-agent-sdk/testing'`.
 *
 * @module
 */
export { scriptedModel, type ScriptedModel, type ScriptedTurn } from './scripted-model.js';
