/**
 * The scripted model of the CLI tests that inspect or audit a session's decisions: a prompt
 * `read secrets` reads secrets.env, `write <name>` writes <name>.txt, anything else gets a
 * reply; the step after a tool answers `done: <prompt>`.
 */
import { scriptedModel, toolCall } from '../../src/testing/index.js';

/** A fresh instance of the model (its script keeps no state across instances). */
export const readWriteModel = () =>
  scriptedModel((request) => {
    const last = request.messages.filter((m) => m.role === 'user').at(-1);
    const text = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
    if (request.step > 0) return `done: ${text}`;
    if (text === 'read secrets') return toolCall('Read', { file_path: 'secrets.env' });
    if (text.startsWith('write ')) {
      return toolCall('Write', { file_path: `${text.slice(6)}.txt`, content: 'from the model' });
    }
    return `reply to ${text}`;
  });
