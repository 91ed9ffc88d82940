import { existsSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';

/**
 * Static checks of the compose file users run for a real Temporal cluster (Docker does not run
 * on CI machines, so this is what keeps the file, its dynamic config and the README honest).
 */

const repoRoot = new URL('../../', import.meta.url);
const composeUrl = new URL('../../docker-compose.yml', import.meta.url);
const readmeUrl = new URL('../../README.md', import.meta.url);

interface PortMapping {
  hostIp: string | undefined;
  published: number | undefined;
  target: number;
}

interface Service {
  image?: unknown;
  environment?: unknown;
  ports?: unknown;
  volumes?: unknown;
  depends_on?: unknown;
  healthcheck?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function loadYaml(url: URL): unknown {
  return load(readFileSync(url, 'utf8'));
}

function loadServices(): Record<string, Service> {
  const compose = loadYaml(composeUrl);
  if (!isRecord(compose) || !isRecord(compose.services)) {
    throw new Error('docker-compose.yml has no `services` mapping');
  }
  const services: Record<string, Service> = {};
  for (const [name, service] of Object.entries(compose.services)) {
    if (!isRecord(service)) throw new Error(`service ${name} is not a mapping`);
    services[name] = service;
  }
  return services;
}

function service(name: string): Service {
  const found = loadServices()[name];
  if (found === undefined) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
}

/** `environment` as a list (`KEY=value`) or a mapping, normalised to a mapping of strings. */
function environment(svc: Service): Record<string, string> {
  const env = svc.environment;
  if (env === undefined) return {};
  if (Array.isArray(env)) {
    const out: Record<string, string> = {};
    for (const entry of env) {
      const text = String(entry);
      const eq = text.indexOf('=');
      if (eq < 0) out[text] = '';
      else out[text.slice(0, eq)] = text.slice(eq + 1);
    }
    return out;
  }
  if (isRecord(env)) {
    return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v == null ? '' : String(v)]));
  }
  throw new Error('environment must be a list or a mapping');
}

/** Compose `ports`, short (`[ip:]host:container`) or long syntax, normalised. */
function ports(svc: Service): PortMapping[] {
  if (svc.ports === undefined) return [];
  if (!Array.isArray(svc.ports)) throw new Error('ports must be a list');
  return svc.ports.map((entry: unknown): PortMapping => {
    if (isRecord(entry)) {
      return {
        hostIp: entry.host_ip === undefined ? undefined : String(entry.host_ip),
        published: entry.published === undefined ? undefined : Number(entry.published),
        target: Number(entry.target),
      };
    }
    const parts = String(entry).split('/')[0]!.split(':');
    if (parts.length === 3) {
      return { hostIp: parts[0], published: Number(parts[1]), target: Number(parts[2]) };
    }
    if (parts.length === 2) {
      return { hostIp: undefined, published: Number(parts[0]), target: Number(parts[1]) };
    }
    return { hostIp: undefined, published: undefined, target: Number(parts[0]) };
  });
}

function publishedPort(name: string, target: number): number {
  const mapping = ports(service(name)).find((p) => p.target === target);
  if (mapping?.published === undefined) {
    throw new Error(`service ${name} does not publish container port ${target}`);
  }
  return mapping.published;
}

/** Host side of a bind mount whose container side is `containerPath`, as a repo-relative path. */
function bindMountSource(svc: Service, containerPath: string): string | undefined {
  if (!Array.isArray(svc.volumes)) return undefined;
  for (const volume of svc.volumes) {
    if (isRecord(volume)) {
      if (volume.type === 'bind' && volume.target === containerPath) return String(volume.source);
      continue;
    }
    const [source, target] = String(volume).split(':');
    if (target === containerPath && source !== undefined && source.startsWith('.')) return source;
  }
  return undefined;
}

/**
 * Resolves DYNAMIC_CONFIG_FILE_PATH (relative to the image's /etc/temporal) through the
 * service's bind mounts to the file in this repository.
 */
function dynamicConfigUrl(): URL {
  const temporal = service('temporal');
  const configPath = environment(temporal).DYNAMIC_CONFIG_FILE_PATH;
  if (!configPath) throw new Error('temporal service sets no DYNAMIC_CONFIG_FILE_PATH');
  const inContainer = posix.resolve('/etc/temporal', configPath);
  const containerDir = posix.dirname(inContainer);
  const source = bindMountSource(temporal, containerDir);
  if (source === undefined) throw new Error(`nothing from the repo is mounted at ${containerDir}`);
  return new URL(posix.join(source, posix.basename(inContainer)), repoRoot);
}

function dynamicConfigValues(key: string): unknown[] {
  const config = loadYaml(dynamicConfigUrl());
  if (!isRecord(config)) throw new Error('dynamic config is not a mapping');
  const entries = config[key];
  if (!Array.isArray(entries)) throw new Error(`dynamic config has no list for ${key}`);
  return entries.map((entry: unknown) => (isRecord(entry) ? entry.value : undefined));
}

/** The README section under a heading named "Run against a real cluster", up to the next one. */
function readmeSection(title: string): string | undefined {
  const lines = readFileSync(readmeUrl, 'utf8').split('\n');
  const start = lines.findIndex((line) =>
    new RegExp(`^#{1,6}\\s+${title}\\s*#*\\s*$`, 'i').test(line),
  );
  if (start < 0) return undefined;
  const level = /^#+/.exec(lines[start]!)![0].length;
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => {
    const heading = /^(#{1,6})\s/.exec(line);
    return heading !== null && heading[1]!.length <= level;
  });
  return (end < 0 ? rest : rest.slice(0, end)).join('\n');
}

describe('docker-compose.yml', () => {
  it('defines postgresql, temporal and temporal-ui', () => {
    expect(Object.keys(loadServices())).toEqual(
      expect.arrayContaining(['postgresql', 'temporal', 'temporal-ui']),
    );
  });

  it('pins every image to an exact version tag', () => {
    for (const [name, svc] of Object.entries(loadServices())) {
      expect(typeof svc.image, `${name}.image`).toBe('string');
      const image = String(svc.image);
      expect(image, `${name}: no variable substitution in image`).not.toContain('$');
      const match = /^([^@\s]+):([^:/@\s]+)(@sha256:[0-9a-f]{64})?$/.exec(image);
      expect(match, `${name}: image ${image} has a tag`).not.toBeNull();
      const tag = match![2]!;
      expect(tag, `${name}: image ${image}`).not.toBe('latest');
      expect(tag, `${name}: image ${image} is a version, not a floating major`).toMatch(
        /^v?\d+\.\d+/,
      );
    }
    expect(service('postgresql').image).toMatch(/^postgres:/);
    expect(service('temporal').image).toMatch(/^temporalio\/auto-setup:/);
    expect(service('temporal-ui').image).toMatch(/^temporalio\/ui:/);
  });

  it('publishes ports on loopback only, and does not publish PostgreSQL', () => {
    for (const [name, svc] of Object.entries(loadServices())) {
      for (const mapping of ports(svc)) {
        expect(mapping.hostIp, `${name} publishes ${mapping.target} beyond loopback`).toBe(
          '127.0.0.1',
        );
        expect(mapping.published, `${name}: explicit host port for ${mapping.target}`).toBeTypeOf(
          'number',
        );
      }
    }
    expect(ports(service('temporal'))).toContainEqual({
      hostIp: '127.0.0.1',
      published: 7233,
      target: 7233,
    });
    expect(ports(service('temporal-ui'))).toContainEqual({
      hostIp: '127.0.0.1',
      published: 8080,
      target: 8080,
    });
    expect(ports(service('postgresql'))).toEqual([]);
  });

  it('runs temporal on PostgreSQL persistence, after PostgreSQL is healthy', () => {
    const env = environment(service('temporal'));
    expect(env.DB).toBe('postgres12');
    expect(env.DB_PORT).toBe('5432');
    expect(env.POSTGRES_SEEDS).toBe('postgresql');

    const postgres = service('postgresql');
    const pgEnv = environment(postgres);
    expect(env.POSTGRES_USER).toBe(pgEnv.POSTGRES_USER);
    expect(env.POSTGRES_PWD).toBe(pgEnv.POSTGRES_PASSWORD);
    expect(env.POSTGRES_PWD).toBeTruthy();

    expect(isRecord(postgres.healthcheck) && postgres.healthcheck.test).toBeTruthy();
    expect(service('temporal').depends_on).toMatchObject({
      postgresql: { condition: 'service_healthy' },
    });
  });

  it('points the UI at the temporal service', () => {
    const env = environment(service('temporal-ui'));
    expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
    const dependsOn = service('temporal-ui').depends_on;
    const deps = Array.isArray(dependsOn)
      ? dependsOn
      : Object.keys(isRecord(dependsOn) ? dependsOn : {});
    expect(deps).toContain('temporal');
  });
});

describe('dynamic config (deploy/dynamicconfig/development-sql.yaml)', () => {
  it('is the file the temporal service mounts and names', () => {
    expect(fileURLToPath(dynamicConfigUrl())).toBe(
      fileURLToPath(new URL('../../deploy/dynamicconfig/development-sql.yaml', import.meta.url)),
    );
    expect(existsSync(dynamicConfigUrl())).toBe(true);
  });

  it('uses the dynamic config format: each key a list of { value, constraints }', () => {
    const config = loadYaml(dynamicConfigUrl());
    expect(isRecord(config)).toBe(true);
    for (const [key, entries] of Object.entries(config as Record<string, unknown>)) {
      expect(Array.isArray(entries), `${key} is a list`).toBe(true);
      for (const entry of entries as unknown[]) {
        expect(isRecord(entry) && 'value' in entry, `${key} entry has a value`).toBe(true);
        const constraints = (entry as Record<string, unknown>).constraints;
        expect(constraints === undefined || isRecord(constraints), `${key} constraints`).toBe(true);
      }
    }
  });

  it('raises the transfer-queue and forwarder rate limits to 1000', () => {
    expect(dynamicConfigValues('history.transferProcessorMaxPollRPS')).toEqual([1000]);
    expect(dynamicConfigValues('matching.forwarderMaxRatePerSecond')).toEqual([1000]);
    expect(dynamicConfigValues('frontend.enableServerVersionCheck')).toEqual([false]);
  });
});

describe('README', () => {
  it.skipIf(!existsSync(readmeUrl))(
    "'Run against a real cluster' names the ports the compose file publishes",
    () => {
      const section = readmeSection('Run against a real cluster');
      expect(section, "README has a 'Run against a real cluster' section").toBeDefined();
      const text = section!;

      const temporalPort = publishedPort('temporal', 7233);
      const uiPort = publishedPort('temporal-ui', 8080);
      expect(text).toContain('docker compose up -d');
      expect(text).toContain(`127.0.0.1:${temporalPort}`);
      expect(text).toMatch(new RegExp(`http://(127\\.0\\.0\\.1|localhost):${uiPort}\\b`));

      // Every loopback address the section mentions is one the compose file publishes.
      const published = new Set(
        Object.values(loadServices()).flatMap((svc) => ports(svc).map((p) => p.published)),
      );
      for (const [, port] of text.matchAll(/(?:127\.0\.0\.1|localhost):(\d+)/g)) {
        expect(published, `README mentions port ${port}`).toContain(Number(port));
      }
    },
  );
});
