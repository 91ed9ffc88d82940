/** The chat page: a form, and a script that reads one send's events as server-sent events. */
export const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>durable-agent chat</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; }
  .user { font-weight: bold; margin-top: 1rem; }
  .tool { color: #666; font-size: 0.9em; }
  .reply { white-space: pre-wrap; }
</style>
</head>
<body>
<h1>Chat</h1>
<div id="log"></div>
<form id="form">
  <input id="prompt" name="prompt" size="50" autocomplete="off" placeholder="Ask something">
  <button id="send">Send</button>
</form>
<script>
const log = document.getElementById('log');
const form = document.getElementById('form');
const input = document.getElementById('prompt');
function line(className, text) {
  const div = document.createElement('div');
  div.className = className;
  div.textContent = text;
  log.append(div);
  return div;
}
form.addEventListener('submit', (submit) => {
  submit.preventDefault();
  const prompt = input.value.trim();
  if (!prompt) return;
  input.value = '';
  line('user', prompt);
  let reply;
  let pieces = 0;
  const events = new EventSource('/chat?prompt=' + encodeURIComponent(prompt));
  events.onmessage = (message) => {
    const event = JSON.parse(message.data);
    if (event.type === 'tool-start') line('tool', 'running ' + event.toolName);
    if (event.type === 'tool-end') line('tool', event.toolName + ': ' + event.status);
    if (event.type === 'text-delta') {
      reply ??= line('reply', '');
      reply.textContent += event.text;
      pieces++;
    }
    if (event.type === 'restart') reply && (reply.textContent = '');
    if (event.type === 'finish' || event.type === 'error') {
      events.close();
      const done = line('done', event.type === 'finish'
        ? event.status + ' (' + pieces + ' pieces streamed)'
        : 'error: ' + event.error.message);
      done.dataset.status = event.type === 'finish' ? event.status : 'error';
    }
  };
  events.onerror = () => events.close();
});
</script>
</body>
</html>
`;
