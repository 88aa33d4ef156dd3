// Clinical intake: live progress of a scenario run. The run page works
// without this module (a "Refresh" link). With it, the page polls the
// progress fragment (data-progress-url) every few seconds and copies into
// the progress region only the texts that changed, so the live region
// (aria-live="polite") announces changes and nothing else; when the run
// has ended it reloads the page for the scores. The fragment is our own
// server-rendered templ output; values are only ever copied as text.
// Each poll is a signed-in request, which would keep an unattended
// clinician session alive forever: polling stops after IDLE_STOP_MS
// without a key press or pointer use (under the server's 30-minute idle
// sign-out), and the page says so.

const doc = document;
doc.documentElement.classList.add('js');

const POLL_MS = 4000;
const MAX_BACKOFF_MS = 60000;
const IDLE_STOP_MS = 25 * 60 * 1000;

let lastActivity = Date.now();
for (const type of ['keydown', 'pointerdown', 'wheel', 'focusin']) {
  doc.addEventListener(type, () => { lastActivity = Date.now(); }, { passive: true, capture: true });
}

const region = doc.querySelector('[data-run-progress][data-progress-url]');

/** Shows the "live progress stopped" note: the poll cannot go on. */
function stop() {
  const note = doc.querySelector('[data-progress-stopped]');
  if (note) note.hidden = false;
}

/** Copies what changed from the fresh region into the page's. */
function update(fresh) {
  for (const el of fresh.querySelectorAll('[data-field]')) {
    const mine = region.querySelector(`[data-field="${el.dataset.field}"]`);
    if (!mine) continue;
    if (el.hasAttribute('data-field-list')) {
      // A list (the items in flight): its entries, as the server wrote them.
      if (mine.innerHTML !== el.innerHTML) mine.replaceChildren(...el.childNodes);
    } else if (mine.textContent !== el.textContent) mine.textContent = el.textContent;
    if (mine.hidden !== el.hidden) mine.hidden = el.hidden;
  }
  const bar = region.querySelector('progress');
  const freshBar = fresh.querySelector('progress');
  if (bar && freshBar) {
    bar.max = freshBar.max;
    bar.value = freshBar.value;
  }
}

async function poll(delay) {
  if (Date.now() - lastActivity > IDLE_STOP_MS) {
    stop();
    return;
  }
  if (doc.hidden) {
    window.setTimeout(() => poll(delay), POLL_MS);
    return;
  }
  let res;
  try {
    res = await fetch(region.dataset.progressUrl, {
      headers: { Accept: 'text/html' },
      credentials: 'same-origin',
      redirect: 'manual', // signed out: the sign-in redirect is not a fragment
    });
  } catch {
    // Offline or the server restarting: try again later.
    const next = Math.min(delay * 2, MAX_BACKOFF_MS);
    window.setTimeout(() => poll(next), next);
    return;
  }
  if (res.type === 'opaqueredirect' || res.status === 401 || res.status === 403 || res.status === 404) {
    stop();
    return;
  }
  if (!res.ok) {
    const next = Math.min(delay * 2, MAX_BACKOFF_MS);
    window.setTimeout(() => poll(next), next);
    return;
  }
  const tpl = doc.createElement('template');
  tpl.innerHTML = await res.text();
  const fresh = tpl.content.querySelector('[data-run-progress]');
  if (!fresh) {
    stop();
    return;
  }
  if (fresh.dataset.ended === 'true') {
    window.location.reload();
    return;
  }
  update(fresh);
  window.setTimeout(() => poll(POLL_MS), POLL_MS);
}

if (region && region.dataset.ended !== 'true') {
  window.setTimeout(() => poll(POLL_MS), POLL_MS);
}
