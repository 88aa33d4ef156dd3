// Clinical intake: progressive enhancement for the clinician pages. Every
// page works without this module. With it:
//  - "Copy" buttons copy a value (the audit reference) to the clipboard;
//  - the "Print" button prints the handoff;
//  - the worklist follows the live feed: on a change it fetches the rows
//    fragment for the current filter and swaps it in, announcing the update
//    in #worklist-status.
// Fragments are our own server-rendered templ output, parsed with
// <template>; values are only ever inserted as text.

const doc = document;
doc.documentElement.classList.add('js');

const DEBOUNCE_MS = 300;

/**
 * Writes a message into a live region. Emptying it first makes screen
 * readers announce a message that repeats the previous one.
 */
function say(region, text) {
  if (!region) return;
  region.textContent = '';
  window.setTimeout(() => {
    region.textContent = text;
  }, 50);
}

// ---------------------------------------------------------------------------
// Copy and print buttons (event delegation: they may arrive in fragments).

async function copyValue(btn) {
  const value = btn.dataset.copy ?? '';
  const region = doc.getElementById('copy-status');
  try {
    await navigator.clipboard.writeText(value);
    btn.dataset.copied = '';
    const label = btn.textContent;
    btn.textContent = 'Copied';
    say(region, 'Copied to the clipboard');
    window.setTimeout(() => {
      btn.textContent = label;
      delete btn.dataset.copied;
    }, 2000);
  } catch {
    // No clipboard access (insecure context, permission): select the value so
    // the user can copy it with the keyboard.
    const target = btn.parentElement?.querySelector('.selectable');
    if (target) {
      const range = doc.createRange();
      range.selectNodeContents(target);
      const sel = window.getSelection();
      sel?.removeAllRanges();
      sel?.addRange(range);
    }
    say(region, 'Could not copy. The value is selected: press Control+C or Command+C to copy it.');
  }
}

doc.addEventListener('click', (ev) => {
  const t = ev.target instanceof Element ? ev.target : null;
  const copy = t?.closest('button[data-copy]');
  if (copy) {
    ev.preventDefault();
    copyValue(copy);
    return;
  }
  if (t?.closest('button[data-print]')) {
    ev.preventDefault();
    window.print();
  }
});

// ---------------------------------------------------------------------------
// Worklist live updates: one EventSource per page.

function initWorklist(resumed = false) {
  const tbody = doc.getElementById('worklist-rows');
  if (!tbody || !('EventSource' in window)) return;
  const rowsUrl = tbody.dataset.rowsUrl;
  const eventsUrl = tbody.dataset.eventsUrl;
  if (!rowsUrl || !eventsUrl) return;
  const region = doc.getElementById('worklist-status');

  let timer = 0;
  let inflight = null; // AbortController of the running fetch
  let again = false; // another change arrived while fetching
  let closed = false;
  const urgent = new Set(); // intake ids escalated since the last refresh

  const es = new EventSource(eventsUrl);

  function stop(message) {
    closed = true;
    es.close();
    window.clearTimeout(timer);
    inflight?.abort();
    if (message) say(region, message);
  }

  function schedule() {
    if (closed) return;
    window.clearTimeout(timer);
    timer = window.setTimeout(refresh, DEBOUNCE_MS);
  }

  /** Where keyboard focus is inside the rows, to put it back after a swap. */
  function focusedRow() {
    const a = doc.activeElement;
    if (!a || !tbody.contains(a)) return null;
    return a.closest('tr')?.dataset.intakeId ?? null;
  }

  async function refresh() {
    if (closed) return;
    if (inflight) {
      again = true;
      return;
    }
    const escalated = [...urgent];
    urgent.clear();
    const ctrl = new AbortController();
    inflight = ctrl;
    tbody.setAttribute('aria-busy', 'true');
    try {
      const res = await fetch(rowsUrl, {
        headers: { Accept: 'text/html' },
        credentials: 'same-origin',
        cache: 'no-store',
        signal: ctrl.signal,
      });
      // The rows URL never redirects unless the session has gone (sign-in page).
      if (res.status === 401 || res.status === 403 || res.redirected) {
        stop('Your session has ended. Reload the page to sign in again.');
        return;
      }
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const html = await res.text();
      const tpl = doc.createElement('template');
      tpl.innerHTML = html;
      const keep = focusedRow();
      tbody.replaceChildren(tpl.content);
      if (keep) {
        const row = [...tbody.querySelectorAll('tr[data-intake-id]')].find((r) => r.dataset.intakeId === keep);
        (row?.querySelector('a') ?? tbody.closest('.table-wrap'))?.focus();
      }
      say(region, escalated.length
        ? `Urgent: intake ${escalated.join(', ')} escalated`
        : 'Worklist updated');
    } catch (err) {
      if (ctrl.signal.aborted) return;
      for (const id of escalated) urgent.add(id);
      say(region, 'The worklist could not be updated. Reload the page to see the latest.');
    } finally {
      if (inflight === ctrl) inflight = null;
      tbody.removeAttribute('aria-busy');
      if (again && !closed) {
        again = false;
        schedule();
      }
    }
  }

  es.addEventListener('intake', (ev) => {
    let data = null;
    try {
      data = JSON.parse(ev.data);
    } catch {
      data = null;
    }
    if (data && data.urgent === true && data.intake_id) urgent.add(String(data.intake_id));
    schedule();
  });
  es.addEventListener('reload', () => schedule());
  // The server ends the feed when the sign-in no longer holds (signed out in
  // another tab, account disabled, idle or expired).
  es.addEventListener('signedout', () => stop('Your session has ended. Reload the page to sign in again.'));
  es.onerror = () => {
    // While readyState is CONNECTING the browser retries by itself. CLOSED
    // means the server refused the stream (signed out, rate limited): stop.
    if (es.readyState === EventSource.CLOSED && !closed) {
      stop('Live updates stopped. Reload the page to see the latest intakes.');
    }
  };

  // Close the stream when the page goes away (one live stream per page: the
  // browser allows only six connections per origin).
  window.addEventListener('pagehide', () => stop(''), { once: true });
  // Back from the back/forward cache: changes may have been missed.
  if (resumed) schedule();
}

window.addEventListener('pageshow', (ev) => {
  if (ev.persisted) initWorklist(true);
});

// A form that came back with errors: focus moves to its error summary, which
// links each error to its field (the summary is server-rendered; without
// JavaScript it is simply the first thing on the page).
function focusErrorSummary() {
  const summary = doc.querySelector('[data-error-summary]');
  if (summary instanceof HTMLElement) summary.focus();
}

function init() {
  focusErrorSummary();
  initWorklist();
}

if (doc.readyState === 'loading') doc.addEventListener('DOMContentLoaded', init);
else init();
