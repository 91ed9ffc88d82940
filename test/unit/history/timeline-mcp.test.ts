/**
 * The MCP tool list a session used, read back from its recorded history
 * (`test/fixtures/histories/mcp-session-run*.json`, scripts/record-mcp-histories.ts): the
 * first run's `listMcpTools` result, the second run's carried list; and `inspect`'s line.
 */
import { readFileSync } from 'node:fs';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { describe, expect, it } from 'vitest';
import { renderTimeline } from '../../../src/cli/render.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { mcpToolsLine } from '../../../src/history/timeline-mcp.js';

const timelineOf = (name: string) =>
  timelineFromHistory(
    historyFromJSON(
      JSON.parse(
        readFileSync(new URL(`../../fixtures/histories/${name}.json`, import.meta.url), 'utf8'),
      ),
    ),
  );

describe('the MCP tool list in a timeline', () => {
  it('a first run has the list its listMcpTools activity returned; the next run the carried one', () => {
    const run1 = timelineOf('mcp-session-run1');
    const run2 = timelineOf('mcp-session-run2');
    expect(run1.mcpTools?.tools.map((t) => t.name)).toEqual([
      'mcp__notes__read_note',
      'mcp__notes__write_note',
      'mcp__notes__slow',
    ]);
    expect(run1.mcpTools?.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(run1.mcpTools?.unavailable).toEqual([]);
    expect(run2.mcpTools).toEqual(run1.mcpTools);
  });

  it('inspect names the tools by server, the list and the servers that were down', () => {
    const run1 = timelineOf('mcp-session-run1');
    const digest = run1.mcpTools!.digest.slice(0, 12);
    expect(renderTimeline(run1).split('\n')).toContain(
      `MCP tools: 3 (notes: read_note, write_note, slow), list ${digest}`,
    );
    expect(
      mcpToolsLine({
        digest: '',
        tools: [],
        unavailable: [{ server: 'gone', message: 'spawn ENOENT' }],
      }),
    ).toBe('MCP tools: 0, list none; unavailable: gone (spawn ENOENT)');
  });

  it('a session without MCP servers has none', () => {
    expect(timelineOf('continued-as-new-run1').mcpTools).toBeUndefined();
  });
});
