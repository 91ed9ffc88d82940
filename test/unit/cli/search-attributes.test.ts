/**
 * The session search attributes' registration commands, the refusal a client recognises as
 * "the server lacks them", and `durable-agent sessions --status/--agent` parsing.
 */
import { ServiceError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/cli/args.js';
import { CliError } from '../../../src/cli/cli-error.js';
import {
  isMissingSearchAttribute,
  sessionSearchAttributes,
} from '../../../src/client/search-attributes.js';
import {
  searchAttributeCreateArgs,
  searchAttributeCreateCommand,
  searchAttributeFlags,
} from '../../../src/common/search-attributes.js';

/** A gRPC error as the client's connection raises it, wrapped as `workflow.start` does. */
function startRefused(code: number, details: string): ServiceError {
  const grpc = Object.assign(new Error(`${code} ${details}`), { code, details });
  return new ServiceError('Failed to start Workflow', { cause: grpc });
}

describe('registration', () => {
  it('gives start-dev one --search-attribute value an attribute, with its type', () => {
    expect(searchAttributeFlags()).toEqual([
      'DurableAgentName=Keyword',
      'DurableAgentVersion=Keyword',
      'DurableAgentStatus=Keyword',
      'DurableAgentPendingApprovals=Int',
      'DurableAgentLastDecision=Keyword',
      'DurableAgentSpentTokens=Int',
      'DurableAgentSpendUsd=Double',
    ]);
  });

  it('gives operators one create command an attribute, in the namespace given', () => {
    const commands = searchAttributeCreateArgs('prod');
    expect(commands).toHaveLength(7);
    expect(commands[6]?.slice(-3)).toEqual(['DurableAgentSpendUsd', '--type', 'Double']);
    expect(commands[3]).toEqual([
      'operator',
      'search-attribute',
      'create',
      '--namespace',
      'prod',
      '--name',
      'DurableAgentPendingApprovals',
      '--type',
      'Int',
    ]);
    expect(searchAttributeCreateCommand('prod').split(' && ')).toHaveLength(7);
  });
});

describe('a server without the attributes', () => {
  it("is recognised by the SQL visibility store's refusal", () => {
    const error = startRefused(
      3,
      'Namespace default has no mapping defined for search attribute DurableAgentStatus',
    );
    expect(isMissingSearchAttribute(error)).toBe(true);
  });

  it("is recognised by the Elasticsearch and test server's refusal", () => {
    const error = startRefused(3, 'search attribute DurableAgentName is not defined');
    expect(isMissingSearchAttribute(error)).toBe(true);
  });

  it('a server without the spend attributes alone: budgeted sessions start without them', () => {
    const attributes = sessionSearchAttributes({
      namespace: 'default',
      agentName: 'a',
      version: 'v',
      logger: undefined,
      logLevel: 'ERROR',
    });
    const names = (budgeted: boolean) => attributes.initial(budgeted)?.map((pair) => pair.key.name);
    expect(names(false)).not.toContain('DurableAgentSpentTokens');
    expect(names(true)).toEqual(
      expect.arrayContaining(['DurableAgentSpentTokens', 'DurableAgentSpendUsd']),
    );
    const refusal =
      'Namespace default has no mapping defined for search attribute DurableAgentSpentTokens';
    expect(attributes.refusedForMissing(startRefused(3, refusal))).toBe(true);
    // The others stay; the spend attributes go.
    expect(names(true)).toEqual(names(false));
    expect(names(true)).toContain('DurableAgentStatus');
  });

  it('is not confused with another invalid argument or another code', () => {
    expect(isMissingSearchAttribute(startRefused(3, 'WorkflowId is not set'))).toBe(false);
    expect(isMissingSearchAttribute(startRefused(14, 'DurableAgentStatus unavailable'))).toBe(
      false,
    );
  });
});

describe('durable-agent sessions --status --agent', () => {
  it('takes a status and an agent name', () => {
    const parsed = parseCommandLine(
      ['sessions', '--status', 'awaiting_approval', '--agent', 'support'],
      {},
    );
    expect(parsed).toMatchObject({
      kind: 'command',
      status: 'awaiting_approval',
      agent: 'support',
    });
  });

  it('refuses an unknown status, naming the statuses', () => {
    expect(() => parseCommandLine(['sessions', '--status', 'waiting'], {})).toThrow(
      new CliError(
        "--status must be one of running, awaiting_approval, cleaning_up, idle, closed, failed, canceled, terminated, timed_out, continued_as_new, got 'waiting'",
        { usage: true },
      ),
    );
  });

  it('refuses --status on a command that lists nothing', () => {
    expect(() => parseCommandLine(['inspect', 'x', '--status', 'idle'], {})).toThrow(CliError);
  });
});
