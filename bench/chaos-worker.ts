/** A worker process of bench/chaos.ts: BENCH_CHAOS holds its ChaosSettings as JSON. */
import { createAgentWorker } from '../src/index.js';
import { chaosAgentOptions, type ChaosSettings } from './chaos-agent.js';

const settings = JSON.parse(process.env.BENCH_CHAOS ?? '{}') as ChaosSettings;
const worker = await createAgentWorker(chaosAgentOptions(settings));
console.log('ready');
await worker.done;
