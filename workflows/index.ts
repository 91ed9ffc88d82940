/**
 * The workflow bundle's entry: everything registered here runs in Temporal's sandbox.
 *
 * @module
 */
export { sessionWorkflow } from './session-workflow.js';
