/**
 * The help of `durable-agent`: the command list, one command's usage and description (from
 * the command table), and the global options and environment variables.
 *
 * @module
 */
import { DEFAULTS } from '../common/defaults.js';
import {
  CODEC_TOKEN_VARIABLE,
  DEFAULT_ADDRESS,
  DEFAULT_TIMEOUT_MS,
  KEYS_VARIABLE,
  UI_TOKEN_VARIABLE,
} from './cli-defaults.js';
import { COMMANDS, type CommandName } from './command-table.js';

/** The full help text, or one command's (`durable-agent <command> --help`). */
export function helpText(command?: CommandName): string {
  if (command) {
    const { usage, description } = COMMANDS[command];
    return `usage: ${usage}\n\n${description}\n\n${GLOBALS}`;
  }
  return [
    'durable-agent: inspect and drive durable agent sessions on Temporal',
    '',
    'commands:',
    ...Object.values(COMMANDS).map(
      ({ usage, summary }) => `  ${usage.replace(/^durable-agent /, '').padEnd(58)} ${summary}`,
    ),
    '',
    GLOBALS,
    '',
    'A <sessionId> may be given as the workflow id the Web UI shows: session-<id>.',
    'From a source checkout: npx tsx src/cli/main.ts <command> ...',
    'Exit status: 0 ok, 1 failure (or replay found nondeterminism), 2 usage error;',
    'golden: 0 no decision changed, 1 some changed, 2 bad input or usage;',
    'gate: 0 no decision flips, 1 some flip, 2 bad input (module, no sessions, server) or usage;',
    'audit-verify: 0 the log holds, 1 an entry changed, removed, moved or not in the history, 2 bad input.',
    'Set DEBUG=1 for stack traces.',
  ].join('\n');
}

const GLOBALS = [
  'global options:',
  `  --address HOST:PORT   Temporal frontend (default: $TEMPORAL_ADDRESS, else ${DEFAULT_ADDRESS})`,
  "  --namespace NAME      namespace (default: $TEMPORAL_NAMESPACE, else the profile's, else default)",
  '  --tls                 connect with TLS (default: $TEMPORAL_TLS, or when any TLS setting or an API key is set)',
  '  --tls-ca-path FILE    CA certificate of the server, PEM ($TEMPORAL_TLS_SERVER_CA_CERT_PATH)',
  '  --tls-server-name N   name the server certificate must carry ($TEMPORAL_TLS_SERVER_NAME)',
  '  --tls-cert-path FILE  client certificate for mTLS, PEM ($TEMPORAL_TLS_CLIENT_CERT_PATH)',
  '  --tls-key-path FILE   client private key for mTLS, PEM ($TEMPORAL_TLS_CLIENT_KEY_PATH)',
  '  --api-key KEY         API key, sent as authorization: Bearer ($TEMPORAL_API_KEY)',
  '  --grpc-meta N=V       gRPC header on every call, repeatable ($TEMPORAL_GRPC_META_<N>)',
  "  --profile NAME        profile of Temporal's config file ($TEMPORAL_PROFILE, else default)",
  "  --config-file FILE    Temporal's config file ($TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml)",
  '                        flags win over variables, variables over the profile (as the temporal CLI)',
  `  --payloads DIR        the agent's payload store, for sessions with offloaded payloads (default: ${DEFAULTS.payloadDir})`,
  `  --timeout T           how long sessions, inspect, replay, pending, approve, deny and gate wait on the server`,
  `                        and on the session's worker, in all: milliseconds, or 500ms, 10s, 2m (default: ${DEFAULT_TIMEOUT_MS / 1000}s)`,
  '  -h, --help            this help',
  '  -v, --version         the version of durable-agent-sdk (with no command)',
  '',
  'environment:',
  `  ${KEYS_VARIABLE}   the key ring of an agent with encryption (keyId:base64Key, comma-separated,`,
  '                        the current key first): inspect, replay, golden, ui and the client commands',
  '                        decrypt with it; codec-server serves it',
  `  ${CODEC_TOKEN_VARIABLE}     the bearer token codec-server requires (at least 16 characters)`,
  `  ${UI_TOKEN_VARIABLE}        the token of ui's pages (at least 16 characters; default: a random one)`,
].join('\n');
