/**
 * `durable-agent`'s connection flags (issue 16, item 1): the temporal CLI's flag names, over
 * the `TEMPORAL_*` variables, over the profile; errors name the flag.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/cli/args.js';
import { CliError } from '../../../src/cli/cli-error.js';

const dir = mkdtempSync(join(tmpdir(), 'cli-args-'));
const caPath = join(dir, 'ca.pem');
writeFileSync(caPath, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
const env = { HOME: dir };

function command(argv: string[], environment: NodeJS.ProcessEnv = env) {
  const parsed = parseCommandLine(argv, environment);
  if (parsed.kind !== 'command') throw new Error('expected a command');
  return parsed;
}

describe('durable-agent connection flags', () => {
  it('connects plain to 127.0.0.1:7233 by default', () => {
    const parsed = command(['sessions']);
    expect(parsed.address).toBe('127.0.0.1:7233');
    expect(parsed.connection.tls).toBe(false);
  });

  it('takes TLS, API key and metadata from the flags', () => {
    const parsed = command([
      'sessions',
      '--address',
      'h:1',
      '--tls-ca-path',
      caPath,
      '--tls-server-name',
      'temporal.test',
      '--api-key',
      'k',
      '--grpc-meta',
      'x-a=1',
      '--grpc-meta',
      'x-b=2=3',
    ]);
    expect(parsed.connection).toMatchObject({
      address: 'h:1',
      apiKey: 'k',
      metadata: { 'x-a': '1', 'x-b': '2=3' },
      tls: { serverNameOverride: 'temporal.test', serverRootCACertificate: expect.any(Buffer) },
    });
  });

  it('reads the variables and the profile like the temporal CLI, flags first', () => {
    const file = join(dir, 'temporal.toml');
    writeFileSync(
      file,
      '[profile.cloud]\naddress = "cloud:7233"\nnamespace = "ns.acct"\napi_key = "pk"\n',
    );
    const parsed = command(['sessions', '--profile', 'cloud', '--namespace', 'other'], {
      ...env,
      TEMPORAL_CONFIG_FILE: file,
    });
    expect(parsed.address).toBe('cloud:7233');
    expect(parsed.namespace).toBe('other');
    expect(parsed.connection.apiKey).toBe('pk');
    expect(parsed.connection.tls).toEqual({});
  });

  it('names the flag of an unreadable certificate file (usage error, exit 2)', () => {
    const missing = join(dir, 'missing.pem');
    let error: unknown;
    try {
      command(['sessions', '--tls-ca-path', missing]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toBe(
      `--tls-ca-path: cannot read '${missing}' (no such file)`,
    );
    expect((error as CliError).exitCode).toBe(2);
  });

  it('refuses --grpc-meta without NAME=VALUE', () => {
    expect(() => command(['sessions', '--grpc-meta', 'novalue'])).toThrow(
      "--grpc-meta must be NAME=VALUE, got 'novalue'",
    );
  });

  it('ignores the environment TLS for golden, which reaches no server', () => {
    const parsed = command(['golden', 'm.ts', 'r.json'], {
      ...env,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'nope'),
    });
    expect(parsed.connection.tls).toBe(false);
  });
});

describe('durable-agent option values', () => {
  it('checks a negative value given after its option instead of calling it ambiguous', () => {
    expect(() => command(['sessions', '--limit', '-1'])).toThrow(
      "--limit must be a positive integer, got '-1'",
    );
    expect(() => command(['sessions', '--timeout', '-5'])).toThrow(/--timeout must be a positive/);
    // Another option after a value-taking one is still an option.
    expect(() => command(['sessions', '--limit', '--json'])).toThrow(CliError);
    expect(command(['sessions', '--limit', '3']).limit).toBe(3);
  });
});

describe('durable-agent dev --versioning', () => {
  it('takes auto, deployments and off, and leaves it unset when not given', () => {
    for (const mode of ['auto', 'deployments', 'off'] as const) {
      expect(command(['dev', 'agent.ts', '--versioning', mode]).versioning).toBe(mode);
    }
    expect(command(['dev', 'agent.ts']).versioning).toBeUndefined();
  });

  it('refuses another value with a usage error naming it and the values it takes', () => {
    const error = (() => {
      try {
        command(['dev', 'agent.ts', '--versioning', 'pinned']);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toBe(
      "--versioning must be one of auto, deployments, off, got 'pinned'",
    );
  });

  it('is refused by commands that start no worker', () => {
    expect(() => command(['sessions', '--versioning', 'off'])).toThrow(
      /sessions does not take --versioning/,
    );
  });
});

describe('durable-agent --version', () => {
  it('--version and -v with no command ask for the version, with global options or not', () => {
    for (const argv of [
      ['--version'],
      ['-v'],
      ['--address', 'h:1', '--version'],
      ['--version', '--address', 'h:1'],
      ['-v', '--json'],
    ]) {
      expect(parseCommandLine(argv, env), argv.join(' ')).toEqual({ kind: 'version' });
    }
  });

  it("leaves gate's --version V to gate, and gate without its value a usage error", () => {
    expect(command(['gate', 'agent.ts', '--version', 'v41']).version).toBe('v41');
    expect(command(['--version', 'v41', 'gate', 'agent.ts']).version).toBe('v41');
    expect(() => command(['gate', 'agent.ts', '--version'])).toThrow(/argument missing/);
  });

  it('is not taken by a command', () => {
    expect(() => command(['sessions', '-v'])).toThrow(CliError);
    expect(() => command(['sessions', '--version'])).toThrow(CliError);
  });
});
