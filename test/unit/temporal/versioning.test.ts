/**
 * `advanced.temporal.versioning` against a server's answer to DescribeWorkerDeployment (the
 * answers measured on Temporal 1.32.0 and the time-skipping test server, see
 * src/temporal/versioning.ts): what 'auto' and 'deployments' come to, and the errors.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/common/errors.js';
import { resolveVersioning } from '../../../src/temporal/versioning.js';

/** A workflow service whose DescribeWorkerDeployment answers `answer` (an error when given). */
function service(answer: { code: number; details?: string; message: string } | 'ok') {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    describeWorkerDeployment: async () => {
      calls++;
      if (answer === 'ok') return {};
      throw Object.assign(new Error(answer.message), answer);
    },
  };
}

const notFound = { code: 5, message: "no Worker Deployment found with name 'a'" };
const disabled = {
  code: 7,
  details: 'Worker Deployment Versions are disabled on this namespace.',
  message: '7 PERMISSION_DENIED: Worker Deployment Versions are disabled on this namespace.',
};
const unimplemented = { code: 12, message: 'Worker Versioning not yet supported in test server' };

function context(lines: string[]) {
  const logger = {
    debug: () => undefined,
    info: (m: string) => lines.push(`INFO ${m}`),
    warn: (m: string) => lines.push(`WARN ${m}`),
    error: () => undefined,
  };
  return {
    side: 'worker' as const,
    agentName: 'a',
    version: 'v1',
    address: 'h:1',
    namespace: 'ns',
    logger,
    logLevel: 'INFO' as const,
  };
}

describe('resolveVersioning', () => {
  it("comes to 'deployments' for 'auto' where the deployment exists or does not yet, with one INFO line", async () => {
    for (const answer of ['ok', notFound] as const) {
      const lines: string[] = [];
      await expect(resolveVersioning('auto', service(answer), context(lines))).resolves.toBe(
        'deployments',
      );
      expect(lines).toEqual([
        "INFO worker of agent 'a' version 'v1': routing by Worker Deployments",
      ]);
    }
  });

  it("comes to 'off' for 'auto' on a server without them (INFO) or with them disabled (WARN)", async () => {
    const lines: string[] = [];
    await expect(resolveVersioning('auto', service(unimplemented), context(lines))).resolves.toBe(
      'off',
    );
    await expect(resolveVersioning('auto', service(disabled), context(lines))).resolves.toBe('off');
    expect(lines.map((l) => l.slice(0, 5))).toEqual(['INFO ', 'WARN ']);
    expect(lines[0]).toMatch(/unversioned/);
  });

  it("refuses 'deployments' on a server without them, naming the server setting", async () => {
    for (const answer of [unimplemented, disabled]) {
      const error = await resolveVersioning('deployments', service(answer), context([])).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain("advanced.temporal.versioning 'deployments'");
      expect((error as Error).message).toContain('system.enableDeploymentVersions=true');
    }
  });

  it("asks nothing for 'off'", async () => {
    const s = service(unimplemented);
    await expect(resolveVersioning('off', s, context([]))).resolves.toBe('off');
    expect(s.calls).toBe(0);
  });

  it('refuses to guess on any other answer (ConfigError naming the call and the settings)', async () => {
    const error = await resolveVersioning(
      'auto',
      service({ code: 7, message: 'Request unauthorized.' }),
      context([]),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      /could not ask h:1 \(namespace 'ns'\) whether it has Worker Deployments \(DescribeWorkerDeployment: Request unauthorized\.\)/,
    );
  });
});
