/**
 * The workflow bundle's entry: everything registered here runs in Temporal's sandbox.
 *
 * @module
 */
import type { SESSION_WORKFLOW, SessionWorkflow } from '../src/common/workflow-io.js';
import type * as entry from './index.js';

export { sessionWorkflow } from './session-workflow.js';
export { sharedBudgetWorkflow } from './budget/budget-workflow.js';

type Assert<T extends true> = T;
/** Compile-time: the bundle exports the session workflow under the type name clients start. */
type _Registered = Assert<
  (typeof entry)[typeof SESSION_WORKFLOW] extends SessionWorkflow ? true : false
>;
