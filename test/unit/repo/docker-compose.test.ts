import { existsSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, YAML11_SCHEMA } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import {
  CERTIFICATE_FILES,
  CLUSTER_SERVICES,
  DYNAMIC_CONFIG_FILE,
  SCHEMA_SETUP_SCRIPT,
  SERVER_CONFIG_FILE,
  TEMPORAL_SERVER_VERSION,
  TLS_SERVER_NAME,
  clusterPorts,
  DEFAULT_CLUSTER_DIR,
  serviceEnvironment,
  type ClusterState,
} from '../../../scripts/cluster.js';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../../src/server/dev-server.js';
import { searchAttributeCreateArgs } from '../../../src/common/search-attributes.js';

/**
 * Static checks of the compose file users run for a real Temporal cluster (Docker does not run
 * on CI machines, so this is what keeps the file, its dynamic config and docs/cluster.md honest),
 * and that it runs what scripts/cluster.ts runs as processes (which CI does start).
 */

const repoRoot = new URL('../../../', import.meta.url);
const composeUrl = new URL('../../../docker-compose.yml', import.meta.url);
const clusterDocUrl = new URL('../../../docs/cluster.md', import.meta.url);

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
  command?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function loadYaml(url: URL): unknown {
  return load(readFileSync(url, 'utf8'));
}

function loadServices(): Record<string, Service> {
  // YAML 1.1, as Compose reads it: the file shares settings through merge keys (`<<: *name`).
  const compose = load(readFileSync(composeUrl, 'utf8'), { schema: YAML11_SCHEMA });
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

/** The `temporal-<service>` compose services that run the Temporal server. */
const serverServices = CLUSTER_SERVICES.map((name) => `temporal-${name}`);

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
function dynamicConfigUrl(name = 'temporal-frontend'): URL {
  const temporal = service(name);
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

/** The section of docs/cluster.md under the heading `title`, up to the next one of its level. */
function clusterDocSection(title: string): string | undefined {
  const lines = readFileSync(clusterDocUrl, 'utf8').split('\n');
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
  it('defines postgresql, the schema setup, the four server services, the namespace step and the UI', () => {
    expect(Object.keys(loadServices()).sort()).toEqual(
      [
        'postgresql',
        'temporal-setup',
        ...serverServices,
        'temporal-namespace',
        'temporal-ui',
      ].sort(),
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
    for (const name of serverServices) expect(service(name).image).toMatch(/^temporalio\/server:/);
    expect(service('temporal-setup').image).toMatch(/^temporalio\/admin-tools:/);
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
    expect(ports(service('temporal-frontend'))).toContainEqual({
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

  it('sets up the schemas once PostgreSQL is healthy, and starts the server services after that', () => {
    expect(service('temporal-setup').depends_on).toMatchObject({
      postgresql: { condition: 'service_healthy' },
    });
    const postgres = service('postgresql');
    const pgEnv = environment(postgres);
    expect(isRecord(postgres.healthcheck) && postgres.healthcheck.test).toBeTruthy();
    for (const name of ['temporal-setup', ...serverServices]) {
      const env = environment(service(name));
      expect(env.POSTGRES_SEEDS, name).toBe('postgresql');
      expect(env.DB_PORT, name).toBe('5432');
      expect(env.POSTGRES_USER, name).toBe(pgEnv.POSTGRES_USER);
      expect(env.POSTGRES_PWD, name).toBe(pgEnv.POSTGRES_PASSWORD);
    }
    for (const name of ['temporal-history', 'temporal-matching', 'temporal-frontend']) {
      expect(service(name).depends_on, name).toMatchObject({
        'temporal-setup': { condition: 'service_completed_successfully' },
      });
    }
  });

  it('points the UI at the temporal service', () => {
    for (const name of ['temporal-ui', 'temporal-namespace']) {
      expect(environment(service(name)).TEMPORAL_ADDRESS, name).toBe('temporal-frontend:7233');
      const dependsOn = service(name).depends_on;
      const deps = Array.isArray(dependsOn)
        ? dependsOn
        : Object.keys(isRecord(dependsOn) ? dependsOn : {});
      expect(deps, name).toContain('temporal-frontend');
    }
  });
});

describe('dynamic config (deploy/dynamicconfig/development-sql.yaml)', () => {
  it('is the file every server service mounts and names', () => {
    for (const name of serverServices) {
      expect(fileURLToPath(dynamicConfigUrl(name)), name).toBe(
        fileURLToPath(
          new URL('../../../deploy/dynamicconfig/development-sql.yaml', import.meta.url),
        ),
      );
    }
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

  it('fires short timers on time (a 100 ms timer shift), as the embedded dev server does', () => {
    expect(dynamicConfigValues('history.timerProcessorMaxTimeShift')).toEqual(['100ms']);
    expect(DEV_SERVER_DYNAMIC_CONFIG['history.timerProcessorMaxTimeShift']).toBe('"100ms"');
  });

  it('turns Worker Deployments on, as the embedded dev server does', () => {
    expect(dynamicConfigValues('system.enableDeploymentVersions')).toEqual([true]);
    expect(dynamicConfigValues('frontend.workerVersioningWorkflowAPIs')).toEqual([true]);
    expect(DEV_SERVER_DYNAMIC_CONFIG['system.enableDeploymentVersions']).toBe('true');
    expect(DEV_SERVER_DYNAMIC_CONFIG['frontend.workerVersioningWorkflowAPIs']).toBe('true');
  });
});

describe('docs/cluster.md', () => {
  it.skipIf(!existsSync(clusterDocUrl))(
    "'Run a self-hosted cluster with Docker' names the ports the compose file publishes",
    () => {
      const section = clusterDocSection('Run a self-hosted cluster with Docker');
      expect(
        section,
        "docs/cluster.md has a 'Run a self-hosted cluster with Docker' section",
      ).toBeDefined();
      const text = section!;

      const temporalPort = publishedPort('temporal-frontend', 7233);
      const uiPort = publishedPort('temporal-ui', 8080);
      expect(text).toContain('docker compose up -d');
      expect(text).toContain(`127.0.0.1:${temporalPort}`);
      expect(text).toMatch(new RegExp(`http://(127\\.0\\.0\\.1|localhost):${uiPort}\\b`));

      // Every loopback address the section mentions is one the compose file publishes.
      const published = new Set(
        Object.values(loadServices()).flatMap((svc) => ports(svc).map((p) => p.published)),
      );
      for (const [, port] of text.matchAll(/(?:127\.0\.0\.1|localhost):(\d+)/g)) {
        expect(published, `docs/cluster.md mentions port ${port}`).toContain(Number(port));
      }
    },
  );
});

/** What scripts/cluster.ts gives a service process, for a cluster on the default ports. */
function scriptEnvironment(name: (typeof CLUSTER_SERVICES)[number], tls: boolean) {
  const dir = '/var/tmp/cluster';
  const state: ClusterState = {
    version: TEMPORAL_SERVER_VERSION,
    dir,
    address: '127.0.0.1:7233',
    namespace: 'default',
    ports: clusterPorts(7233),
    tls: tls
      ? {
          dir: `${dir}/tls`,
          caFile: `${dir}/tls/ca.pem`,
          clientCertFile: `${dir}/tls/client.pem`,
          clientKeyFile: `${dir}/tls/client.key`,
          serverName: TLS_SERVER_NAME,
        }
      : undefined,
    logLevel: 'info',
    serverBin: '/opt/temporal/server',
    pgBin: '/usr/lib/postgresql/15/bin',
    pids: {},
  };
  return serviceEnvironment(state, name);
}

/** The repository file a container path of `svc` comes from, through its bind mounts. */
function mountedFile(svc: Service, containerFile: string): string | undefined {
  const source = bindMountSource(svc, posix.dirname(containerFile));
  if (source !== undefined) {
    return fileURLToPath(new URL(posix.join(source, posix.basename(containerFile)), repoRoot));
  }
  const file = bindMountSource(svc, containerFile);
  return file === undefined ? undefined : fileURLToPath(new URL(file, repoRoot));
}

const readRepoFile = (path: string) => readFileSync(new URL(path, repoRoot), 'utf8');

describe('docker-compose.yml and scripts/cluster.ts (the cluster CI starts) run the same cluster', () => {
  it("the same Temporal server version: the script's pin", () => {
    for (const name of serverServices) {
      expect(service(name).image, name).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    }
    for (const name of ['temporal-setup', 'temporal-namespace']) {
      expect(service(name).image, name).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
    }
  });

  it('the same four services, one per container or process', () => {
    for (const name of CLUSTER_SERVICES) {
      expect(environment(service(`temporal-${name}`)).TEMPORAL_SERVICES, name).toBe(name);
      expect(scriptEnvironment(name, false).TEMPORAL_SERVICES).toBe(name);
    }
    const running = Object.entries(loadServices())
      .filter(([, svc]) => String(svc.image).startsWith('temporalio/server:'))
      .map(([name]) => name);
    expect(running.sort()).toEqual([...serverServices].sort());
  });

  it('the same server config file (deploy/temporal/config.yaml)', () => {
    for (const name of CLUSTER_SERVICES) {
      const svc = service(`temporal-${name}`);
      const path = environment(svc).TEMPORAL_SERVER_CONFIG_FILE_PATH;
      expect(path, name).toBeTruthy();
      expect(mountedFile(svc, path!), name).toBe(SERVER_CONFIG_FILE);
      expect(scriptEnvironment(name, false).TEMPORAL_SERVER_CONFIG_FILE_PATH).toBe(
        SERVER_CONFIG_FILE,
      );
    }
  });

  it('the same dynamic config file', () => {
    for (const name of CLUSTER_SERVICES) {
      expect(fileURLToPath(dynamicConfigUrl(`temporal-${name}`)), name).toBe(DYNAMIC_CONFIG_FILE);
      expect(scriptEnvironment(name, false).DYNAMIC_CONFIG_FILE_PATH).toBe(DYNAMIC_CONFIG_FILE);
    }
  });

  it('the same settings: compose sets nothing the script does not, and agrees where addresses do not differ', () => {
    const template = readRepoFile('deploy/temporal/config.yaml')
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('#'))
      .join('\n');
    const read = new Set([...template.matchAll(/env "([A-Z_]+)"/g)].map((m) => m[1]!));
    for (const name of CLUSTER_SERVICES) {
      const script = scriptEnvironment(name, false);
      const compose = environment(service(`temporal-${name}`));
      // Every variable the config reads comes from the script (the shard count has one default).
      const unset = [...read].filter(
        (key) => !(key in scriptEnvironment(name, true)) && key !== 'NUM_HISTORY_SHARDS',
      );
      expect(unset, `${name}: read by config.yaml, not set by the script`).toEqual([]);
      const withTls = scriptEnvironment(name, true);
      expect(Object.keys(compose).filter((key) => !(key in withTls))).toEqual([]);
      for (const key of ['TEMPORAL_ALLOW_NO_AUTH', 'POSTGRES_USER', 'POSTGRES_PWD']) {
        expect(compose[key], `${name} ${key}`).toBe(script[key]);
      }
      expect(compose.TEMPORAL_TLS, name).toBe('${TEMPORAL_TLS:-off}');
      expect(script.TEMPORAL_TLS).toBe('off');
      expect(scriptEnvironment(name, true).TEMPORAL_TLS).toBe('mtls');
    }
  });

  it("the same TLS layout: compose mounts the folder the script's `certs` writes, and every certificate file named exists in it", () => {
    const tlsDir = relative(fileURLToPath(repoRoot), join(DEFAULT_CLUSTER_DIR, 'tls'));
    for (const name of [...serverServices, 'temporal-namespace', 'temporal-ui']) {
      const svc = service(name);
      const env = environment(svc);
      const containerDir = env.TEMPORAL_TLS_DIR ?? '/etc/temporal/tls';
      expect(bindMountSource(svc, containerDir), name).toBe(`./${tlsDir}`);
      if (env.TEMPORAL_TLS_SERVER_NAME !== undefined) {
        expect(env.TEMPORAL_TLS_SERVER_NAME, name).toBe(TLS_SERVER_NAME);
      }
    }
    for (const name of CLUSTER_SERVICES) {
      const script = scriptEnvironment(name, true);
      expect(script.TEMPORAL_TLS_DIR).toBe('/var/tmp/cluster/tls');
      expect(script.TEMPORAL_TLS_SERVER_NAME).toBe(TLS_SERVER_NAME);
    }
    const named = new Set<string>();
    const sources = [
      readRepoFile('deploy/temporal/config.yaml'),
      readRepoFile('deploy/temporal/create-namespace.sh'),
      readRepoFile('docker-compose.yml'),
    ];
    for (const text of sources) {
      for (const m of text.matchAll(
        /(?:TEMPORAL_TLS_DIR(?:" *}})?|TEMPORAL_UI_TLS:\+)\/([\w.-]+)/g,
      )) {
        named.add(m[1]!);
      }
    }
    expect([...named].sort()).toEqual([
      'ca.pem',
      'client.key',
      'client.pem',
      'frontend.key',
      'frontend.pem',
      'system-worker.key',
      'system-worker.pem',
    ]);
    for (const file of named) expect(CERTIFICATE_FILES, file).toContain(file);
  });

  it('the same schema setup script (deploy/temporal/setup-postgres.sh)', () => {
    const setup = service('temporal-setup');
    const command = Array.isArray(setup.command) ? setup.command.map(String) : [];
    expect(command).toHaveLength(1);
    expect(mountedFile(setup, command[0]!)).toBe(SCHEMA_SETUP_SCRIPT);
  });

  it("the same session search attributes: the compose namespace step registers the script's", () => {
    const namespaceStep = service('temporal-namespace');
    const command = Array.isArray(namespaceStep.command) ? namespaceStep.command.map(String) : [];
    expect(mountedFile(namespaceStep, command[0]!)).toBe(
      fileURLToPath(new URL('deploy/temporal/create-namespace.sh', repoRoot)),
    );
    const script = readRepoFile('deploy/temporal/create-namespace.sh');
    const loop = /for attribute in ([^;]+);/.exec(script.replace(/\\\n/g, ' '));
    const registered = (loop?.[1] ?? '').trim().split(/\s+/);
    const scripted = searchAttributeCreateArgs('default').map((args) => {
      const at = (flag: string) => args[args.indexOf(flag) + 1];
      return `${at('--name')}:${at('--type')}`;
    });
    expect(registered).toEqual(scripted);
    expect(script).toContain(
      'temporal operator search-attribute create --namespace "$namespace" \\\n' +
        '    --name "${attribute%%:*}" --type "${attribute#*:}" "$@"',
    );
  });

  it("publishes the frontend on the script's default port", () => {
    expect(publishedPort('temporal-frontend', 7233)).toBe(clusterPorts(7233).frontend);
  });
});
