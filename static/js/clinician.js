// Clinical intake: progressive enhancement for the clinician pages. Every
// page works without this module. With it:
//  - "Copy" buttons copy a value (the audit reference) to the clipboard;
//  - the "Print" button prints the handoff;
//  - a file over its input's limit is refused before it is sent;
//  - the worklist follows the live feed: on a change it fetches that one
//    row and puts it in place when it belongs on this page, else counts it
//    behind a "changes elsewhere: show" link; both announced in
//    #worklist-status.
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
// Worklist live updates: one EventSource per page. Each change fetches that
// intake's row alone; the row is put in its place when it belongs on this
// page (between this page's first and last rows in the list's order), and
// otherwise counted behind the "N changes elsewhere in the list: show the
// latest" link (the first page of this filter). Nothing refetches the whole page.

/** A row's place in the order: group rank, then newest updated, then id descending. */
function rowKey(tr) {
  return { rank: Number(tr.dataset.rank), sort: tr.dataset.sort ?? '', id: tr.dataset.intakeId ?? '' };
}

/** Whether key a comes before key b in the worklist's order. */
function comesBefore(a, b) {
  if (a.rank !== b.rank) return a.rank < b.rank;
  if (a.sort !== b.sort) return a.sort > b.sort; // fixed-width times: text order is time order
  return a.id > b.id;
}

function initWorklist(resumed = false) {
  const tbody = doc.getElementById('worklist-rows');
  if (!tbody || !('EventSource' in window)) return;
  const rowUrl = tbody.dataset.rowUrl;
  const rowQuery = tbody.dataset.rowQuery ?? '';
  const eventsUrl = tbody.dataset.eventsUrl;
  if (!rowUrl || !eventsUrl) return;
  const region = doc.getElementById('worklist-status');
  const changesBox = doc.getElementById('worklist-changes');
  const countEl = changesBox?.querySelector('[data-changes-count]');

  const rows = () => [...tbody.querySelectorAll('tr[data-intake-id]')];
  // The page's span of the order, fixed at load: the first page has no
  // lower bound, the last page no upper one.
  const loaded = rows();
  const lo = loaded.length && !tbody.hasAttribute('data-first-page') ? rowKey(loaded[0]) : null;
  const hi = loaded.length && !tbody.hasAttribute('data-last-page') ? rowKey(loaded[loaded.length - 1]) : null;
  const onThisPage = (k) => !(lo && comesBefore(k, lo)) && !(hi && comesBefore(hi, k));

  let timer = 0;
  let inflight = null; // AbortController of the running fetches
  let closed = false;
  const pending = new Map(); // intake id -> urgent, changed since the last fetch
  const elsewhere = new Set(); // changed intakes that belong on other pages
  let missed = false; // the feed lost events (or the page came back from the cache)

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
    timer = window.setTimeout(flush, DEBOUNCE_MS);
  }

  function showElsewhere() {
    if (!changesBox) return;
    if (countEl) countEl.textContent = missed ? 'Some' : String(elsewhere.size);
    changesBox.hidden = false;
  }

  /** Puts a fetched row in its place (or counts it elsewhere); returns what to announce. */
  function place(id, tr, urgent) {
    const old = rows().find((r) => r.dataset.intakeId === id);
    const hadFocus = old?.contains(doc.activeElement) ?? false;
    if (!tr) {
      if (!old) return '';
      old.remove();
      if (!rows().length) {
        elsewhere.add(id);
        showElsewhere();
      }
      return `Intake ${id} no longer matches this list`;
    }
    const k = rowKey(tr);
    if (!onThisPage(k)) {
      old?.remove();
      elsewhere.add(id);
      showElsewhere();
      return urgent ? `Urgent: intake ${id} escalated, on another page` : `${elsewhere.size} changes elsewhere in the list`;
    }
    old?.remove();
    doc.getElementById('worklist-empty')?.remove();
    const next = rows().find((r) => comesBefore(k, rowKey(r)));
    tbody.insertBefore(tr, next ?? null);
    if (hadFocus) tr.querySelector('a')?.focus();
    if (urgent) return `Urgent: intake ${id} escalated`;
    return old ? `Intake ${id} updated` : `Intake ${id} added`;
  }

  async function flush() {
    if (closed) return;
    if (inflight) {
      schedule(); // after the running fetches
      return;
    }
    const batch = [...pending];
    pending.clear();
    if (!batch.length) return;
    const ctrl = new AbortController();
    inflight = ctrl;
    tbody.setAttribute('aria-busy', 'true');
    const said = [];
    try {
      for (const [id, urgent] of batch) {
        const res = await fetch(rowUrl + encodeURIComponent(id) + rowQuery, {
          headers: { Accept: 'text/html' },
          credentials: 'same-origin',
          cache: 'no-store',
          signal: ctrl.signal,
        });
        // The row URL never redirects unless the session has gone (sign-in page).
        if (res.status === 401 || res.status === 403 || res.redirected) {
          stop('Your session has ended. Reload the page to sign in again.');
          return;
        }
        let tr = null;
        if (res.status === 200) {
          const tpl = doc.createElement('template');
          tpl.innerHTML = await res.text();
          tr = tpl.content.querySelector('tr[data-intake-id]');
        } else if (res.status !== 204 && res.status !== 404) {
          throw new Error(`HTTP ${res.status}`);
        }
        const msg = place(id, tr, urgent);
        if (msg) said.push(msg);
      }
      if (said.length) say(region, said.join('. '));
    } catch {
      if (ctrl.signal.aborted) return;
      for (const [id, urgent] of batch) if (!pending.has(id)) pending.set(id, urgent);
      say(region, 'The worklist could not be updated. Reload the page to see the latest.');
    } finally {
      if (inflight === ctrl) inflight = null;
      tbody.removeAttribute('aria-busy');
    }
  }

  es.addEventListener('intake', (ev) => {
    let data = null;
    try {
      data = JSON.parse(ev.data);
    } catch {
      data = null;
    }
    if (!data || !data.intake_id) return;
    const id = String(data.intake_id);
    pending.set(id, (pending.get(id) ?? false) || data.urgent === true);
    schedule();
  });
  es.addEventListener('reload', () => {
    // Events were missed: which rows changed is unknown.
    missed = true;
    showElsewhere();
    say(region, 'Some changes were missed. Use the show link to see the latest.');
  });
  // The server ends the feed when the sign-in no longer holds (signed out in
  // another tab, account disabled, idle or expired).
  es.addEventListener('signedout', () => stop('Your session has ended. Reload the page to sign in again.'));
  // Or when the account lost the role the worklist needs.
  es.addEventListener('forbidden', () => stop('Your account can no longer see the worklist. Reload the page to see what it can open.'));
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
  if (resumed) {
    missed = true;
    showElsewhere();
  }
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

// ---------------------------------------------------------------------------
// File inputs with a size limit (data-max-bytes): a file over it is refused
// on the page, with the server's own sentence (data-too-large) shown as the
// field's error, before anything is sent. The server checks again; this only
// spares a long upload and the server's bare 413 page.

function fileTooLarge(input) {
  const max = Number(input.dataset.maxBytes);
  const file = input.files && input.files[0];
  return Boolean(file && max > 0 && file.size > max);
}

function showFileError(input, show) {
  const id = `${input.id}-error`;
  let err = doc.getElementById(id);
  const field = input.closest('.field');
  if (show) {
    if (!err) {
      err = doc.createElement('p');
      err.className = 'field-error';
      err.id = id;
      const hidden = doc.createElement('span');
      hidden.className = 'visually-hidden';
      hidden.textContent = 'Error: ';
      err.append(hidden, doc.createTextNode(''));
      input.before(err);
    }
    err.lastChild.textContent = input.dataset.tooLarge || 'The file is too large.';
    input.setAttribute('aria-invalid', 'true');
    const ids = (input.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
    if (!ids.includes(id)) input.setAttribute('aria-describedby', [...ids, id].join(' '));
    if (field) field.classList.add('field--error');
  } else if (err) {
    err.remove();
    input.removeAttribute('aria-invalid');
    const ids = (input.getAttribute('aria-describedby') || '').split(' ').filter((x) => x && x !== id);
    input.setAttribute('aria-describedby', ids.join(' '));
    if (field) field.classList.remove('field--error');
  }
}

function initFileLimits() {
  for (const input of doc.querySelectorAll('input[type=file][data-max-bytes]')) {
    input.addEventListener('change', () => showFileError(input, fileTooLarge(input)));
    input.form?.addEventListener('submit', (ev) => {
      if (!fileTooLarge(input)) return;
      ev.preventDefault();
      showFileError(input, true);
      input.focus();
    });
  }
}

function init() {
  focusErrorSummary();
  initWorklist();
  initFileLimits();
}

if (doc.readyState === 'loading') doc.addEventListener('DOMContentLoaded', init);
else init();
