/**
 * Resolution of the connection settings (issue 16, item 1): explicit options over the
 * `TEMPORAL_*` variables over the profile file over the defaults, the files read, and the
 * errors naming what was wrong. Pure apart from files in a temporary folder.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/common/errors.js';
import { resolveTemporalConnection } from '../../../src/temporal/connection-config.js';

const dir = mkdtempSync(join(tmpdir(), 'conn-config-'));
const pem = (what: string) => `-----BEGIN ${what}-----\nAAAA\n-----END ${what}-----\n`;
const caPath = join(dir, 'ca.pem');
const certPath = join(dir, 'client.pem');
const keyPath = join(dir, 'client.key');
writeFileSync(caPath, pem('CERTIFICATE'));
writeFileSync(certPath, pem('CERTIFICATE'));
writeFileSync(keyPath, pem('PRIVATE KEY'));
const notPem = join(dir, 'not.pem');
writeFileSync(notPem, 'hello');

/** A config file in its own folder, and an environment whose HOME has none. */
function configFile(toml: string): string {
  const file = join(mkdtempSync(join(dir, 'cfg-')), 'temporal.toml');
  writeFileSync(file, toml);
  return file;
}
const emptyHome = { HOME: mkdtempSync(join(dir, 'home-')) };

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('resolveTemporalConnection', () => {
  it('has no address, namespace default and no TLS when nothing is set', () => {
    const resolved = resolveTemporalConnection({}, emptyHome);
    expect(resolved).toMatchObject({
      address: undefined,
      namespace: 'default',
      tls: false,
      apiKey: undefined,
      metadata: {},
    });
  });

  it('reads the default profile of $HOME/.config/temporalio/temporal.toml', () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const folder = join(home, '.config', 'temporalio');
    const file = join(folder, 'temporal.toml');
    mkdirSync(folder, { recursive: true });
    writeFileSync(file, '[profile.default]\naddress = "prof:7233"\nnamespace = "prof-ns"\n');
    const resolved = resolveTemporalConnection({}, { HOME: home });
    expect(resolved.address).toBe('prof:7233');
    expect(resolved.namespace).toBe('prof-ns');
    expect(resolved.profile).toEqual({ name: 'default', file });
  });

  it('takes explicit options over variables, and variables over the profile', () => {
    const file = configFile(
      '[profile.default]\naddress = "prof:1"\nnamespace = "prof-ns"\napi_key = "prof-key"\n',
    );
    const env = { ...emptyHome, TEMPORAL_CONFIG_FILE: file, TEMPORAL_NAMESPACE: 'env-ns' };
    const resolved = resolveTemporalConnection({ address: 'opt:2' }, env);
    expect(resolved.address).toBe('opt:2');
    expect(resolved.namespace).toBe('env-ns');
    expect(resolved.apiKey).toBe('prof-key');
    // An API key turns TLS on.
    expect(resolved.tls).toEqual({});
    expect(resolveTemporalConnection({ apiKey: 'opt-key' }, env).apiKey).toBe('opt-key');
  });

  it('reads the profile TEMPORAL_PROFILE names, and profile over it', () => {
    const file = configFile('[profile.a]\naddress = "a:1"\n[profile.b]\naddress = "b:1"\n');
    const env = { ...emptyHome, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'a' };
    expect(resolveTemporalConnection({}, env).address).toBe('a:1');
    expect(resolveTemporalConnection({ profile: 'b' }, env).address).toBe('b:1');
  });

  it('names the option and the file of a profile that is not there', () => {
    const file = configFile('[profile.a]\naddress = "a:1"\n');
    const error = configError(() =>
      resolveTemporalConnection({ profile: 'prod', configFile: file }, emptyHome),
    );
    expect(error.message).toBe(
      `advanced.temporal.profile names profile 'prod', which advanced.temporal.configFile '${file}' does not have`,
    );
    const byVar = configError(() =>
      resolveTemporalConnection(
        {},
        { ...emptyHome, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'x' },
      ),
    );
    expect(byVar.message).toContain("TEMPORAL_PROFILE names profile 'x'");
  });

  it('names a config file that cannot be read', () => {
    const missing = join(dir, 'missing.toml');
    expect(
      configError(() => resolveTemporalConnection({ configFile: missing }, emptyHome)).message,
    ).toBe(`Cannot read advanced.temporal.configFile '${missing}': ENOENT`);
    expect(
      configError(() =>
        resolveTemporalConnection({}, { ...emptyHome, TEMPORAL_CONFIG_FILE: missing }),
      ).message,
    ).toBe(`Cannot read TEMPORAL_CONFIG_FILE '${missing}': ENOENT`);
  });

  it('names the file of a profile that is not TOML', () => {
    const file = configFile('[profile.default\naddress = ');
    expect(
      configError(() => resolveTemporalConnection({ configFile: file }, emptyHome)).message,
    ).toMatch(/^Cannot load profile 'default' from advanced\.temporal\.configFile '.*': /);
  });

  it('loads TLS files given as options into the connection', () => {
    const resolved = resolveTemporalConnection(
      {
        address: 'x:1',
        tls: {
          serverCaCertPath: caPath,
          clientCertPath: certPath,
          clientKey: pem('PRIVATE KEY'),
          serverName: 'temporal.internal',
        },
      },
      emptyHome,
    );
    expect(resolved.tls).toEqual({
      serverRootCACertificate: Buffer.from(pem('CERTIFICATE')),
      serverNameOverride: 'temporal.internal',
      clientCertPair: {
        crt: Buffer.from(pem('CERTIFICATE')),
        key: Buffer.from(pem('PRIVATE KEY')),
      },
    });
    expect(resolved.tlsFrom).toBe('advanced.temporal.tls');
  });

  it('reads the TEMPORAL_TLS_* variables the temporal CLI reads', () => {
    const resolved = resolveTemporalConnection(
      {},
      {
        ...emptyHome,
        TEMPORAL_ADDRESS: 'env:7233',
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: caPath,
        TEMPORAL_TLS_CLIENT_CERT_PATH: certPath,
        TEMPORAL_TLS_CLIENT_KEY_PATH: keyPath,
        TEMPORAL_TLS_SERVER_NAME: 'env-name',
        TEMPORAL_GRPC_META_MY_HEADER: 'v',
      },
    );
    expect(resolved.address).toBe('env:7233');
    expect(resolved.tls).toMatchObject({
      serverNameOverride: 'env-name',
      clientCertPair: { crt: expect.any(Buffer), key: expect.any(Buffer) },
      serverRootCACertificate: expect.any(Buffer),
    });
    expect(resolved.metadata).toEqual({ 'my-header': 'v' });
  });

  it('turns TLS off with tls: false over the variables and an API key', () => {
    const env = { ...emptyHome, TEMPORAL_TLS: 'true', TEMPORAL_API_KEY: 'k' };
    expect(resolveTemporalConnection({}, env).tls).toEqual({});
    expect(resolveTemporalConnection({ tls: false }, env).tls).toBe(false);
    expect(resolveTemporalConnection({}, { ...env, TEMPORAL_TLS: 'false' }).tls).toBe(false);
  });

  it('merges explicit TLS fields over the profile field by field', () => {
    const file = configFile(
      `[profile.default]\naddress = "p:1"\n[profile.default.tls]\nserver_name = "from-profile"\nserver_ca_cert_path = "${caPath}"\n`,
    );
    const resolved = resolveTemporalConnection(
      { configFile: file, tls: { serverName: 'from-option' } },
      emptyHome,
    );
    expect(resolved.tls).toEqual({
      serverNameOverride: 'from-option',
      serverRootCACertificate: Buffer.from(pem('CERTIFICATE')),
    });
  });

  it('ignores the variables and the profile with envConfig: false', () => {
    const env = { ...emptyHome, TEMPORAL_ADDRESS: 'env:1', TEMPORAL_API_KEY: 'k' };
    expect(resolveTemporalConnection({ envConfig: false }, env)).toMatchObject({
      address: undefined,
      apiKey: undefined,
      tls: false,
    });
  });

  it('names the option and the path of an unreadable certificate file', () => {
    const missing = join(dir, 'nope.pem');
    expect(
      configError(() =>
        resolveTemporalConnection(
          { tls: { clientCertPath: missing, clientKeyPath: keyPath } },
          emptyHome,
        ),
      ).message,
    ).toBe(`advanced.temporal.tls.clientCertPath: cannot read '${missing}' (no such file)`);
    expect(
      configError(() =>
        resolveTemporalConnection({}, { ...emptyHome, TEMPORAL_TLS_SERVER_CA_CERT_PATH: dir }),
      ).message,
    ).toBe(`TEMPORAL_TLS_SERVER_CA_CERT_PATH: cannot read '${dir}' (it is a folder)`);
  });

  it('names the profile key of an unreadable certificate file', () => {
    const missing = join(dir, 'gone.pem');
    const file = configFile(`[profile.default.tls]\nclient_cert_path = "${missing}"\n`);
    expect(
      configError(() => resolveTemporalConnection({ configFile: file }, emptyHome)).message,
    ).toBe(
      `tls.client_cert_path of profile 'default' in ${file}: cannot read '${missing}' (no such file)`,
    );
  });

  it('refuses a file that is not PEM', () => {
    expect(
      configError(() => resolveTemporalConnection({ tls: { serverCaCertPath: notPem } }, emptyHome))
        .message,
    ).toBe("advanced.temporal.tls.serverCaCertPath: not PEM (no '-----BEGIN ' line)");
  });

  it('refuses half a client certificate pair, naming the missing half', () => {
    expect(
      configError(() => resolveTemporalConnection({ tls: { clientCertPath: certPath } }, emptyHome))
        .message,
    ).toContain(
      'advanced.temporal.tls.clientCertPath gives half of a client certificate pair: mTLS needs both the certificate and its key; set advanced.temporal.tls.clientKey or advanced.temporal.tls.clientKeyPath',
    );
  });

  it('refuses PEM text and a path for the same certificate', () => {
    expect(
      configError(() =>
        resolveTemporalConnection(
          { tls: { serverCaCert: pem('CERTIFICATE'), serverCaCertPath: caPath } },
          emptyHome,
        ),
      ).message,
    ).toContain(
      'advanced.temporal.tls.serverCaCert and advanced.temporal.tls.serverCaCertPath are both set',
    );
  });

  it('refuses authorization metadata beside an API key', () => {
    expect(
      configError(() =>
        resolveTemporalConnection({ apiKey: 'k', metadata: { Authorization: 'x' } }, emptyHome),
      ).message,
    ).toContain("Both an API key and 'authorization' metadata are set");
  });

  it('lowercases metadata names and refuses one that is not a header name', () => {
    expect(resolveTemporalConnection({ metadata: { 'X-Team': 'a' } }, emptyHome).metadata).toEqual({
      'x-team': 'a',
    });
    expect(
      configError(() => resolveTemporalConnection({ metadata: { 'bad header': 'a' } }, emptyHome))
        .message,
    ).toContain("advanced.temporal.metadata has 'bad header', which is not a gRPC header name");
  });
});
