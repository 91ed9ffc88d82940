/**
 * The session page's stylesheet and script, served as `/assets/ui.css` and `/assets/ui.js`
 * (the Content-Security-Policy allows no inline script or style). The script only keeps the
 * name a person types (per tab) and puts it in the answer forms.
 *
 * @module
 */

/** `/assets/ui.css`. */
export const UI_CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
nav { background: #1d2330; padding: 8px 16px; display: flex; gap: 16px; align-items: center; }
nav a { color: #fff; text-decoration: none; font-weight: 600; }
nav .who { margin-left: auto; color: #cfd5e1; font-size: 12px; }
nav .who input { margin-left: 6px; }
main { padding: 12px 20px 40px; max-width: 1100px; }
h1 small, h2 small, h3 small { color: #667; font-weight: normal; font-size: 13px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e3e6eb; vertical-align: top; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px; background: #e3e6eb; }
.b-awaiting_approval, .b-ask, .b-waiting, .b-pending { background: #ffe7a8; }
.b-running { background: #cfe3ff; }
.b-idle, .b-continue, .b-allow, .b-approved, .b-success, .b-completed { background: #d6f3dc; }
.b-skip, .b-denied, .b-deny, .b-expired, .b-abort, .b-error, .b-failed, .b-timeout,
.b-worker_lost, .b-refused, .b-cancelled, .b-interrupted, .b-aborted, .b-terminated,
.b-timed_out, .b-canceled { background: #ffd9d6; }
.turn, .request, .pending { background: #fff; border: 1px solid #e3e6eb; border-radius: 6px; padding: 8px 14px; margin: 12px 0; }
.prompt { margin: 4px 0 8px; padding: 4px 10px; border-left: 3px solid #8aa4d6; white-space: pre-wrap; }
.answer { margin-top: 8px; white-space: pre-wrap; }
.dispatch, .tool { border-left: 3px solid #d7dce5; margin: 6px 0; padding: 2px 10px; }
.tool { border-left-color: #8aa4d6; }
.tool .dispatch { margin-left: 8px; }
.callbacks { margin: 2px 0 4px; }
.reason { color: #5a3d00; }
.diff { font: 12px/1.4 ui-monospace, monospace; margin: 2px 0 4px 12px; }
.diff del, .diff ins, .diff .key { display: block; text-decoration: none; white-space: pre-wrap; }
.diff del { background: #ffecec; } .diff ins { background: #e6ffed; } .diff .key { color: #667; }
pre.json { background: #f3f4f6; padding: 6px; overflow: auto; max-height: 300px; }
textarea { width: 100%; font: 12px ui-monospace, monospace; }
form { margin: 6px 0; } form.deny input[name=message] { width: 50%; }
.error { color: #a8071a; } .notice { background: #d6f3dc; padding: 6px 10px; border-radius: 4px; }
.none { color: #667; } .waiting { color: #7a5200; margin-left: 6px; }
.asked-for q { font-style: italic; } .answer-as-line { margin: 4px 0; }
.hook-key { background: #ffe7a8; padding: 0 4px; border-radius: 3px; }
`;

/**
 * `/assets/ui.js`. A tab's name is its own: kept in sessionStorage (this tab, across its
 * pages), with localStorage only the default a new tab starts from. Each form carries the
 * name it shows (a hidden field set with the "you answer as" line, when the page loads and
 * as the name is typed), so an answer records the name its form showed: another tab typing
 * another name changes neither.
 */
export const UI_JS = `
(function () {
  var KEY = 'durable-agent-ui-name';
  var field = document.getElementById('ui-name');
  if (!field) return;
  function read(store) { try { return store.getItem(KEY); } catch (e) { return null; } }
  function keep(store, value) { try { store.setItem(KEY, value); } catch (e) {} }
  function answerAs(name) {
    var hidden = document.querySelectorAll('.name-field');
    for (var i = 0; i < hidden.length; i++) hidden[i].value = name;
    var shown = document.querySelectorAll('.answer-as');
    for (var j = 0; j < shown.length; j++) {
      shown[j].textContent = name.trim() ? 'ui:' + name.trim() : shown[j].getAttribute('data-fallback');
    }
  }
  var name = read(window.sessionStorage);
  if (name === null) name = read(window.localStorage) || '';
  field.value = name;
  answerAs(name);
  field.addEventListener('input', function () {
    keep(window.sessionStorage, field.value);
    keep(window.localStorage, field.value);
    answerAs(field.value);
  });
})();
`;
