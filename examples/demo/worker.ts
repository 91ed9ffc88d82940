/**
 * A demo worker process (the demo kills it with SIGKILL mid-session and starts another).
 * DEMO_ENV holds a JSON DemoEnv. Prints `ready` once it polls.
 *
 * @module
 */
import { createAgentWorker } from '../../src/index.js';
import { demoAgentOptions, type DemoEnv } from './agent.js';

const env = JSON.parse(process.env.DEMO_ENV ?? '{}') as DemoEnv;
const worker = await createAgentWorker(demoAgentOptions(env));
console.log('ready');
process.on('SIGTERM', () => void worker.shutdown().then(() => process.exit(0)));
await worker.done;
