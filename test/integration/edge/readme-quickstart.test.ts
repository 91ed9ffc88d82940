/**
 * The README's offline quick start (examples/readme-offline.ts), run as written. It uses the
 * default task queue and TEMPORAL_ADDRESS from the global setup; no other test uses the
 * default task queue.
 */
import { expect, it } from 'vitest';
import { offlineQuickStart } from '../../../examples/readme-offline.js';

it('the README offline quick start reads README.md through a tool and answers', async () => {
  expect(await offlineQuickStart()).toBe('It says hello.');
}, 60_000);
