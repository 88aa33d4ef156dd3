// Clinical intake: progressive enhancement for the server-rendered pages.
// Every page works without this module (plain forms, post-redirect-get).
// With it: live character counters, turns sent with fetch and their replies
// streamed in over EventSource, a status region that announces progress, and
// a countdown of the time left. Server-rendered HTML fragments (our own templ
// components) are parsed with <template>; text from the engine or the
// patient is only ever inserted as text.

const doc = document;
doc.documentElement.classList.add('js');

const numberFormat = new Intl.NumberFormat('en-GB');
const fmt = (n) => numberFormat.format(n);

/** Counts Unicode code points, as the server does. */
const codePoints = (s) => [...s].length;

const csrfToken = () => doc.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';

// ---------------------------------------------------------------------------
// Status region: the one role="status" element (#status).

let statusTicker = 0;

function stopTicker() {
  if (statusTicker) {
    clearInterval(statusTicker);
    statusTicker = 0;
  }
}

/**
 * Writes a message into #status. `extra`, when given, is shown after it in an
 * aria-hidden span, so a value that changes often (elapsed seconds, progress)
 * is visible without being re-announced every time.
 */
function announce(text, { error = false, extra = '' } = {}) {
  const el = doc.getElementById('status');
  if (!el) return;
  stopTicker();
  el.classList.toggle('status--error', error);
  const main = doc.createElement('span');
  main.textContent = text;
  const more = doc.createElement('span');
  more.setAttribute('aria-hidden', 'true');
  more.className = 'status__extra';
  more.textContent = extra;
  el.replaceChildren(main, more);
}

/** Updates only the aria-hidden part of #status (if it is there). */
function setStatusExtra(extra) {
  const more = doc.querySelector('#status .status__extra');
  if (more) more.textContent = extra;
}

/** "Writing a reply… 12 s", the seconds ticking once a second. */
function announceTicking(text, since) {
  const secs = () => ` ${Math.max(0, Math.round((Date.now() - since) / 1000))} s`;
  announce(text, { extra: secs() });
  statusTicker = setInterval(() => setStatusExtra(secs()), 1000);
}

// ---------------------------------------------------------------------------
// Character counters: textarea[data-max][data-counter].

function updateCounter(ta) {
  const out = doc.getElementById(ta.dataset.counter ?? '');
  const max = Number(ta.dataset.max);
  if (!out || !max) return;
  const n = codePoints(ta.value);
  let text = `${fmt(n)} / ${fmt(max)}`;
  if (n > max) text += ` (${fmt(n - max)} over the limit)`;
  else if (n >= max * 0.9) text += ` (${fmt(max - n)} left)`;
  out.textContent = text;
  out.classList.toggle('counter--over', n > max);
  out.classList.toggle('counter--near', n <= max && n >= max * 0.9);
}

function setupCounters(root = doc) {
  for (const ta of root.querySelectorAll('textarea[data-max][data-counter]')) {
    updateCounter(ta);
  }
}

doc.addEventListener('input', (ev) => {
  const t = ev.target;
  if (t instanceof HTMLTextAreaElement && t.dataset.max && t.dataset.counter) updateCounter(t);
});

// ---------------------------------------------------------------------------
// HTML fragments from the server.

/** Parses one trusted server-rendered fragment into its first element. */
function fragment(html) {
  const tpl = doc.createElement('template');
  tpl.innerHTML = String(html ?? '').trim();
  return tpl.content.firstElementChild;
}

function replaceById(id, html) {
  const next = fragment(html);
  const cur = doc.getElementById(id);
  if (!next || !cur) return null;
  cur.replaceWith(next);
  return next;
}

/** Swaps #composer, keeping what the user typed meanwhile and the focus. */
function replaceComposer(html) {
  const old = doc.getElementById('composer');
  const next = fragment(html);
  if (!old || !next) return;
  const oldBox = old.querySelector('#message');
  const typed = oldBox ? oldBox.value : '';
  const hadFocus = old.contains(doc.activeElement);
  const focusedBox = hadFocus && doc.activeElement === oldBox;
  const sel = focusedBox ? [oldBox.selectionStart, oldBox.selectionEnd] : null;
  old.replaceWith(next);
  const box = next.querySelector('#message');
  if (box && typed && box.value === '') box.value = typed;
  // The fragment was rendered once for every tab following the turn: give
  // this page submission ids of its own.
  refreshSubmissionIDs();
  setupCounters(next);
  setupKeysHint(next);
  if (hadFocus) {
    const target = box ?? next.querySelector('a, button:not([disabled]), textarea, input:not([type="hidden"])');
    if (target) {
      target.focus();
      if (box && sel) box.setSelectionRange(sel[0], sel[1]);
    }
  }
}

// ---------------------------------------------------------------------------
// Sending turns: every form[data-turn-form] (message box, quick replies,
// "Send again") is posted with fetch; the server answers 202 with the new
// turn's HTML and its events URL.

let inFlight = false; // a POST is on its way
let following = null; // the turn being followed: { es, url }

function turnForms() {
  return doc.querySelectorAll('form[data-turn-form]');
}

/** Whether the keyboard focus has nowhere to be (a disabled or removed control). */
function focusLost() {
  const a = doc.activeElement;
  return !a || a === doc.body || a === doc.documentElement || !a.isConnected || a.disabled === true;
}

/**
 * After Send or a quick reply disabled the control that had the focus, or
 * after a settled turn replaced it: the message box, else the next sensible
 * control. Never moves a focus that is still somewhere useful (someone
 * typing keeps their place).
 */
function keepFocus() {
  if (!focusLost()) return;
  const target =
    doc.getElementById('message') ??
    doc.querySelector('#composer a[href], #composer button:not([disabled])') ??
    doc.getElementById('emergency-heading');
  if (!target) return;
  if (target.id === 'emergency-heading') target.tabIndex = -1;
  target.focus();
}

/** Disables (or re-enables) every submit button of the turn forms. */
function setSendDisabled(disabled) {
  for (const form of turnForms()) {
    for (const b of form.querySelectorAll('button[type="submit"], button:not([type])')) {
      b.disabled = disabled;
    }
  }
  doc.getElementById('busy-note')?.toggleAttribute('hidden', !disabled);
}

/**
 * The error summary at the top of the composer (the pattern of the start
 * form): shown with a link to the message box and focused, or removed.
 */
function showErrorSummary(message) {
  const composer = doc.getElementById('composer');
  let box = composer?.querySelector('#error-summary');
  if (!message) {
    box?.remove();
    return;
  }
  if (!composer) return;
  if (!box) {
    box = doc.createElement('div');
    box.className = 'error-summary';
    box.id = 'error-summary';
    box.setAttribute('role', 'alert');
    box.tabIndex = -1;
    box.setAttribute('aria-labelledby', 'error-summary-heading');
    const h = doc.createElement('h2');
    h.id = 'error-summary-heading';
    h.textContent = 'There is a problem';
    box.append(h, doc.createElement('ul'));
    composer.querySelector('#composer-heading')?.after(box);
  }
  const li = doc.createElement('li');
  const a = doc.createElement('a');
  a.href = '#message';
  a.textContent = message;
  li.append(a);
  box.querySelector('ul')?.replaceChildren(li);
  box.focus();
}

// An error summary's link moves the focus to its field (and scrolls it,
// with its label, into view).
doc.addEventListener('click', (ev) => {
  const a = ev.target instanceof Element ? ev.target.closest('.error-summary a[href^="#"]') : null;
  if (!a) return;
  const target = doc.getElementById(a.getAttribute('href').slice(1));
  if (!target) return;
  ev.preventDefault();
  const label = doc.querySelector(`label[for="${CSS.escape(target.id)}"]`);
  (label ?? target).scrollIntoView({ block: 'start' });
  target.focus({ preventScroll: true });
});

/** Shows a refused message next to the box and in the error summary. */
function showSendError(message) {
  showFieldError(message);
  showErrorSummary(message);
}

function showFieldError(message) {
  const err = doc.getElementById('message-error');
  const box = doc.getElementById('message');
  if (err) {
    err.replaceChildren();
    if (message) {
      const prefix = doc.createElement('span');
      prefix.className = 'visually-hidden';
      prefix.textContent = 'Error: ';
      err.append(prefix, message);
    }
    err.hidden = !message;
  }
  if (box) {
    const ids = (box.getAttribute('aria-describedby') ?? '').split(/\s+/).filter((id) => id && id !== 'message-error');
    if (message) {
      ids.push('message-error');
      box.setAttribute('aria-invalid', 'true');
    } else {
      box.removeAttribute('aria-invalid');
    }
    box.setAttribute('aria-describedby', ids.join(' '));
  }
}

/**
 * Once a new turn is accepted, no earlier failed turn may be sent again
 * (the server offers Send again only on the last turn): its form goes. The
 * one that was used says where its message went.
 */
function retireRetryForms(used) {
  for (const f of doc.querySelectorAll('#transcript form.retry-form')) {
    if (f === used) {
      const note = doc.createElement('p');
      note.className = 'hint retry-note';
      note.textContent = 'Sent again: see below.';
      f.replaceWith(note);
    } else {
      f.remove();
    }
  }
}

function newSubmissionID() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// A fragment from the server gets fresh submission ids (replaceComposer): it
// may carry the id just sent, or one rendered for another tab, and the next
// message must never be taken for a repeat of the last one.
function refreshSubmissionIDs() {
  const id = newSubmissionID();
  for (const input of doc.querySelectorAll('form[data-turn-form] input[name="submission_id"]')) {
    input.value = id;
  }
}

async function readJSON(res) {
  try {
    return await res.json();
  } catch {
    return null;
  }
}

function fallbackError(status) {
  if (status === 403) return 'Your session has changed. Reload the page and try again.';
  if (status === 429) return 'Too many messages at once. Wait a moment and try again.';
  if (status >= 500) return 'The message could not be sent because of a server problem. Try again in a moment.';
  return `The message could not be sent (error ${status}).`;
}

async function sendTurn(form, submitter) {
  const data0 = new FormData(form, submitter ?? undefined);
  // Browsers without the submitter argument leave the quick reply out.
  if (submitter?.name && !data0.has(submitter.name)) data0.append(submitter.name, submitter.value);
  // Sent urlencoded, exactly as the form itself would be without JavaScript.
  const body = new URLSearchParams(data0);
  const message = String(body.get('message') ?? '');
  const fromBox = form.contains(doc.getElementById('message'));
  const max = Number(doc.getElementById('message')?.dataset.max) || 8000;

  // Errors go to the summary (role="alert", focused): the status region
  // does not repeat them.
  if (message.trim() === '') {
    showSendError('Type a message before sending.');
    return;
  }
  if (codePoints(message) > max) {
    showSendError(`Your message is ${fmt(codePoints(message) - max)} characters over the ${fmt(max)} limit. Shorten it and send again.`);
    return;
  }

  inFlight = true;
  setSendDisabled(true);
  keepFocus();
  announce('Sending your message…');
  let res;
  try {
    res = await fetch(form.action, {
      method: 'POST',
      body,
      credentials: 'same-origin',
      headers: { Accept: 'application/json', 'X-CSRF-Token': csrfToken() },
    });
  } catch {
    inFlight = false;
    setSendDisabled(false);
    announce('');
    showSendError('Could not reach the server. Check your connection and try again.');
    return;
  }
  const data = await readJSON(res);
  inFlight = false;

  if (res.status === 202 && data && data.events_url) {
    showFieldError('');
    showErrorSummary('');
    const transcript = doc.getElementById('transcript');
    const exists = transcript?.querySelector(`[data-index="${Number(data.index)}"]`);
    if (transcript && !exists) {
      const item = fragment(data.turn_html);
      if (item) transcript.append(item);
    }
    doc.getElementById('transcript-empty')?.remove();
    retireRetryForms(form);
    if (fromBox) {
      const box = doc.getElementById('message');
      if (box && box.value === message) box.value = '';
      if (box) updateCounter(box);
    }
    refreshSubmissionIDs();
    follow(data.events_url);
    return;
  }

  if (!data && res.ok) {
    // Not the JSON contract (a redirect to an HTML page): show that page.
    window.location.assign(res.url || window.location.href);
    return;
  }

  setSendDisabled(false);
  const err = data?.error ?? {};
  announce('');
  showSendError(err.message || fallbackError(res.status));
}

doc.addEventListener('submit', (ev) => {
  const form = ev.target;
  if (!(form instanceof HTMLFormElement) || !form.hasAttribute('data-turn-form')) return;
  if (typeof window.fetch !== 'function' || typeof window.EventSource !== 'function') return; // plain post
  ev.preventDefault();
  if (inFlight || following) return; // no double sends
  sendTurn(form, ev.submitter);
});

// Enter in the message box sends it (as does Ctrl+Enter or Cmd+Enter);
// Shift+Enter (or Alt+Enter) starts a new line. An Enter that ends an input
// method's composition (Japanese, Chinese, Korean...) only confirms the
// text: isComposing, or keyCode 229 where a browser reports the confirming
// keydown after compositionend. While a reply is pending Send is disabled:
// Enter then does nothing (the busy note says why) rather than add a line.
doc.addEventListener('keydown', (ev) => {
  const t = ev.target;
  if (ev.key !== 'Enter' || !(t instanceof HTMLTextAreaElement) || t.id !== 'message') return;
  if (ev.isComposing || ev.keyCode === 229) return;
  if (ev.shiftKey || ev.altKey) return;
  ev.preventDefault();
  const send = t.form?.querySelector('button[type="submit"]:not([disabled])');
  if (send) t.form.requestSubmit(send);
});

/**
 * Shows the "Enter sends" hint of each message box under root and adds it to
 * the box's description, so a screen reader reads it with the box. Server
 * rendered hidden: without JavaScript Enter starts a new line.
 */
function setupKeysHint(root = doc) {
  for (const hint of root.querySelectorAll('[data-keys-hint]')) {
    const box = hint.closest('form')?.querySelector('textarea');
    if (!box) continue;
    hint.hidden = false;
    const ids = (box.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean);
    if (!ids.includes(hint.id)) box.setAttribute('aria-describedby', [...ids, hint.id].join(' '));
  }
}

// ---------------------------------------------------------------------------
// Following a turn's events.

function ordinal(n) {
  const s = ['th', 'st', 'nd', 'rd'];
  const v = n % 100;
  return n + (s[(v - 20) % 10] || s[v] || s[0]);
}

/** "1 min 05 s", "42 s": a countdown that moves each second. */
function countdownWords(secs) {
  const s = Math.max(0, Math.round(secs));
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

function parseData(ev) {
  try {
    return JSON.parse(ev.data || '{}') ?? {};
  } catch {
    return {};
  }
}

function pendingItem() {
  return doc.getElementById('pending');
}

function setTypingText(text) {
  const el = pendingItem()?.querySelector('.typing__text');
  if (el) el.textContent = text;
}

function stopFollowing() {
  if (following) {
    following.es.close();
    following = null;
  }
  stopTicker();
}

/** Opens an EventSource on a turn's events and renders them. */
function follow(url) {
  stopFollowing();
  setSendDisabled(true);

  // The server replays the turn from its first event: start from empty.
  const reply = pendingItem()?.querySelector('[data-reply]');
  if (reply) reply.textContent = '';

  const es = new EventSource(url, { withCredentials: true });
  const me = { es, url };
  following = me;
  let lastID = -1; // highest numeric event id seen, to drop duplicates
  let writingSince = 0;
  let done = false;

  const fresh = (ev) => {
    const id = Number(ev.lastEventId);
    if (ev.lastEventId === '' || !Number.isFinite(id)) return true;
    if (id <= lastID) return false;
    lastID = id;
    return true;
  };
  const on = (name, fn) =>
    es.addEventListener(name, (ev) => {
      if (following !== me || done || !fresh(ev)) return;
      fn(parseData(ev));
    });

  // Waiting in line: the server re-reports the place and the wait whenever
  // the line moves and every few seconds. A change of place is announced
  // (politely, in #status); the countdown ticks each second in the
  // aria-hidden part, so it is seen but not read out every second. The
  // wait counts only down: the server never reports a later end, except
  // when the service asked for more time (reason "service_asked"), which
  // is then said in words; a later end for any other reason (an event
  // replayed, one that arrived late) is ignored here.
  let queuedPos = -1;
  let queuedUntil = 0;
  on('queued', (d) => {
    const pos = Math.max(1, Number(d.position) || 1);
    const secs = Math.max(0, Number(d.wait_seconds) || 0);
    const until = Date.now() + secs * 1000;
    const asked = d.reason === 'service_asked';
    if (asked || queuedUntil === 0 || until < queuedUntil) queuedUntil = until;
    const countdown = () => {
      const left = Math.max(0, Math.ceil((queuedUntil - Date.now()) / 1000));
      return left > 0 ? ` Your turn in about ${countdownWords(left)}.` : ' Your turn any moment now.';
    };
    const where = pos === 1 ? 'Your message is next in line.' : `Your message is ${ordinal(pos)} in line.`;
    if (asked) {
      queuedPos = pos;
      const more = Math.max(1, Number(d.added_seconds) || 0);
      announce(`The service asked us to wait longer: about ${countdownWords(more)} more. ${where}`, {
        extra: countdown(),
      });
      statusTicker = setInterval(() => setStatusExtra(countdown()), 1000);
      setTypingText('Waiting: the service asked for more time');
    } else if (pos !== queuedPos) {
      queuedPos = pos;
      announce(`${where} The intake service answers only a few requests a minute, shared by everyone using this app.`, {
        extra: countdown(),
      });
      statusTicker = setInterval(() => setStatusExtra(countdown()), 1000);
      setTypingText(pos === 1 ? 'Waiting in line: next' : `Waiting in line: ${ordinal(pos)}`);
    } else {
      setStatusExtra(countdown());
    }
  });

  on('started', () => {
    writingSince = Date.now();
    pendingItem()?.classList.add('turn--writing');
    setTypingText('Writing a reply…');
    announceTicking('Writing a reply…', writingSince);
  });

  on('delta', (d) => {
    const el = pendingItem()?.querySelector('[data-reply]');
    if (el && typeof d.text === 'string') el.append(d.text); // text node, never HTML
    if (!writingSince) {
      writingSince = Date.now();
      announceTicking('Writing a reply…', writingSince);
    }
  });

  on('completed', () => {
    stopTicker();
    setTypingText('Reply complete.');
    announce('Reply complete. Preparing the next step…');
  });

  // The service compiles a summary after every turn; only the last one
  // (terminal) means the intake is closing, and only then is it worth saying.
  let closing = false;
  on('compiling', (d) => {
    if (d.terminal !== true) return;
    closing = true;
    setTypingText('Finishing this intake…');
    announce('Your answers are in. Writing a summary of this conversation for the clinical team…');
  });

  on('progress', () => {
    if (closing) setStatusExtra(' still writing…');
  });

  // The upstream stream broke off: what streamed may be all there is, or
  // the message may not have been kept. Say so; the final word (a final or
  // failed event) comes from the app's check with the service.
  on('interrupted', (d) => {
    stopTicker();
    const text = d.cut_off
      ? 'The reply was cut off. Checking with the intake service whether your message was kept…'
      : 'The connection to the intake service broke. Checking whether your message arrived…';
    setTypingText('Checking with the intake service…');
    announce(text);
  });

  // final and failed both end the turn: swap in the server's fragments.
  const settle = (d) => {
    done = true;
    stopFollowing();
    swapTurn(d.turn_html);
    if (d.head_html) replaceById('intake-head', d.head_html);
    if (d.state_html) replaceById('state', d.state_html);
    // The emergency card (role="alert") announces itself once inserted.
    if (d.emergency_html) replaceById('emergency', d.emergency_html);
    if (d.composer_html) replaceComposer(d.composer_html);
    setSendDisabled(false);
    keepFocus();
  };

  on('final', (d) => {
    settle(d);
    if (d.emergency_html) {
      // The card's alert is the announcement: the status says nothing more.
      announce('');
      doc.getElementById('emergency')?.scrollIntoView({ block: 'start' });
    } else {
      announce(d.terminal ? 'Reply received. This intake has ended: no more messages can be sent.' : 'Reply received.');
    }
  });

  on('failed', (d) => {
    settle(d);
    announce(d.message || 'The reply could not be completed.', { error: true });
  });

  es.onerror = () => {
    if (following !== me || done) return;
    if (es.readyState === EventSource.CLOSED) {
      // The server refused the stream (404, 429, ...): the browser will not retry.
      following = null;
      stopTicker();
      setSendDisabled(false);
      announce('Lost the connection to the reply. Reload the page to see it.', { error: true });
    } else {
      announce('Connection interrupted. Reconnecting…');
    }
  };
}

/** Replaces the pending item (or the item of the same index) with the final turn. */
function swapTurn(html) {
  const next = fragment(html);
  if (!next) return;
  const transcript = doc.getElementById('transcript');
  const idx = next.getAttribute('data-index');
  const cur = pendingItem() ?? (idx ? transcript?.querySelector(`[data-index="${CSS.escape(idx)}"]`) : null);
  if (cur) cur.replaceWith(next);
  else transcript?.append(next);
}

// ---------------------------------------------------------------------------
// Countdown of the time left: [data-expires-at], updated each minute.

function timeLeftText(ms) {
  if (ms <= 0) return 'Time limit reached: this intake has expired.';
  const mins = Math.ceil(ms / 60000);
  if (mins < 2) return 'Less than 2 min left';
  const h = Math.floor(mins / 60);
  const m = mins % 60;
  if (h === 0) return `${m} min left`;
  return m === 0 ? `${h} h left` : `${h} h ${m} min left`;
}

function setupCountdown() {
  const el = doc.querySelector('[data-expires-at]');
  const at = el ? Date.parse(el.getAttribute('data-expires-at') ?? '') : NaN;
  if (!el || Number.isNaN(at)) return;
  let warned = false;
  const tick = () => {
    // Looked up each time: a settled turn swaps the head (and stops the
    // countdown by leaving it out once the intake has ended).
    const cur = doc.querySelector('[data-expires-at]');
    if (!cur) return;
    const ms = at - Date.now();
    cur.textContent = timeLeftText(ms);
    cur.classList.toggle('time-left--soon', ms <= 10 * 60000);
    if (!warned && ms > 0 && ms <= 5 * 60000 && !following) {
      warned = true;
      announce('About 5 minutes left before this intake expires.');
    }
    if (ms <= 0) return;
    setTimeout(tick, ms % 60000 || 60000);
  };
  tick();
}

// ---------------------------------------------------------------------------
// Start.

function init() {
  setupCounters();
  setupKeysHint();
  setupCountdown();
  doc.getElementById('error-summary')?.focus();
  const pending = doc.querySelector('#pending[data-events-url]');
  if (pending) follow(pending.getAttribute('data-events-url'));
}

if (doc.readyState === 'loading') doc.addEventListener('DOMContentLoaded', init);
else init();
