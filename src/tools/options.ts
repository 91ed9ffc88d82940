/**
 * The agent's `advanced.toolEnv` option: the environment of tool processes.
 *
 * @module
 */

/** The environment of tool processes: the agent's `advanced.toolEnv` option. */
export interface ToolEnvOptions {
  /**
   * More variables passed from the worker's environment, by exact name, besides PATH, HOME,
   * LANG, LC_ALL, TERM and TMPDIR; a name the worker does not have is left out.
   * @default none
   */
  allow?: string[];
  /** Variables set to these values; they win over passed ones. @default none */
  set?: Record<string, string>;
}
