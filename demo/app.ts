/**
 * Field Notes, the sample app's page. It runs inside the marketplace dashboard: `createKit` reads
 * the `mp_*` launch parameters, removes them from the address bar and exchanges the context token
 * for an app session with the backend (`/api/marketplace/session`). Every call to the app's own
 * API goes through `kit.fetch`, which adds the session and renews it when it runs out.
 */
import { createKit, type Kit } from 'marketplace-app-kit';
import 'marketplace-app-kit/elements';

interface Note {
  id: string;
  title: string;
  body: string;
  created_at: string;
}
interface ActivityEntry {
  at: string;
  event: string;
  summary: string;
}

const $ = <T extends HTMLElement>(selector: string) => document.querySelector<T>(selector)!;
const hostOrigins = $<HTMLMetaElement>('meta[name="mp-host-origins"]').content.split(/\s+/).filter(Boolean);

// The names the plans have in the Developer Console (here, the simulator's catalogue, which the
// demo server writes into the page), for the elements' texts: "Your Pro monthly plan", not pro_monthly.
const planNames = JSON.parse($<HTMLMetaElement>('meta[name="mp-plan-names"]').content || '{}') as Record<string, string>;
const kit = await createKit({ backend: '/api/marketplace', hostOrigins, planNames });

/** The app's own API. Open the console: `fieldNotes.api('/notes/export.csv')` on the free plan
 *  shows that the server refuses the paid feature too (403 ERR_ACCESS_DENIED). */
async function api(path: string, init?: RequestInit): Promise<Response> {
  return kit.fetch(`/api${path}`, init);
}

async function json<T>(response: Response): Promise<T> {
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
    throw new Error(body?.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${response.status}`);
  }
  return (await response.json()) as T;
}

function status(message: string, tone: 'info' | 'error' = 'info') {
  const line = $('#status');
  line.textContent = message;
  line.dataset.tone = tone;
}

function renderNotes(notes: readonly Note[]) {
  $('#notes').replaceChildren(
    ...notes.map((note) => {
      const item = document.createElement('li');
      const title = document.createElement('strong');
      title.textContent = note.title;
      const body = document.createElement('p');
      body.textContent = note.body;
      const time = document.createElement('time');
      time.dateTime = note.created_at;
      time.textContent = new Date(note.created_at).toLocaleString(kit.locale);
      item.append(title, body, time);
      return item;
    }),
  );
}

function renderActivity(entries: readonly ActivityEntry[]) {
  const list = $('#activity');
  if (entries.length === 0) {
    const empty = document.createElement('li');
    empty.className = 'hint';
    empty.textContent = 'Nothing yet. Upgrade, or fire an event from the simulator controls.';
    list.replaceChildren(empty);
    return;
  }
  list.replaceChildren(
    ...entries.map((entry) => {
      const item = document.createElement('li');
      item.dataset.event = entry.event;
      const kind = document.createElement('code');
      kind.textContent = entry.event;
      item.append(kind, ` ${entry.summary} `);
      const time = document.createElement('time');
      time.dateTime = entry.at;
      time.textContent = new Date(entry.at).toLocaleTimeString(kit.locale);
      item.append(time);
      return item;
    }),
  );
}

// The last lists loaded, rendered again when the dashboard's locale changes.
let notes: readonly Note[] = [];
let activity: readonly ActivityEntry[] = [];

async function loadNotes() {
  notes = (await json<{ notes: Note[] }>(await api('/notes'))).notes;
  renderNotes(notes);
}

async function loadActivity() {
  activity = (await json<{ activity: ActivityEntry[] }>(await api('/activity'))).activity;
  renderActivity(activity);
}

async function exportCsv() {
  const response = await api('/notes/export.csv');
  if (!response.ok) return json(response); // throws the server's refusal
  const csv = await response.text();
  const preview = $('#csv-preview');
  preview.textContent = csv;
  preview.hidden = false;
  const link = $<HTMLAnchorElement>('#download');
  if (link.href.startsWith('blob:')) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
  link.hidden = false;
  status('Exported your notes to CSV.');
}

const report = (what: string) => (error: unknown) => status(`${what} failed: ${error instanceof Error ? error.message : String(error)}`, 'error');

$<HTMLFormElement>('#note-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const data = new FormData(form);
  api('/notes', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: data.get('title'), body: data.get('body') }),
  })
    .then(json)
    .then(() => {
      form.reset();
      status('Note added.');
      return loadNotes();
    })
    .catch(report('Adding the note'));
});
$('#export').addEventListener('click', () => void exportCsv().catch(report('Export')));

// React to the kit: theme and locale from the dashboard, the user once known, and entitlement
// changes (upgrades in the dashboard, webhooks relayed by it) which also bring new activity, and
// fewer notes after user.revoked.
let shownUser: string | null = null;
let shownEntitlement = '';
let shownLocale = kit.locale;
function onKitChange(current: Kit) {
  document.documentElement.dataset.theme = current.theme;
  if (current.locale !== shownLocale) {
    shownLocale = current.locale;
    renderNotes(notes);
    if (shownUser) renderActivity(activity);
  }
  document.body.dataset.state = current.state;
  $('#outside').hidden = current.state !== 'signed-out';
  if (current.state === 'error' && current.error) status(`${current.error.code}: ${current.error.message}`, 'error');
  if (current.state !== 'ready' || !current.user) return;

  const entitlement = JSON.stringify(current.entitlement);
  if (current.user.id !== shownUser) {
    shownUser = current.user.id;
    shownEntitlement = entitlement;
    // Cosmetic, so a dashboard that does not answer (ERR_BRIDGE_TIMEOUT) is only logged: left
    // uncaught, the rejected promise would be an unhandled rejection.
    current.host?.setTitle('Field Notes').catch((error: unknown) => console.warn('The dashboard did not set the title:', error));
    Promise.all([loadNotes(), loadActivity()]).catch(report('Loading'));
  } else if (entitlement !== shownEntitlement) {
    shownEntitlement = entitlement;
    Promise.all([loadNotes(), loadActivity()]).catch(report('Loading'));
  }
}
kit.subscribe(onKitChange);
onKitChange(kit);

declare global {
  interface Window {
    /** For the console (and the end-to-end tests): the kit and the app's API helper. */
    fieldNotes: { kit: Kit; api: typeof api; loadNotes: typeof loadNotes };
  }
}
window.fieldNotes = { kit, api, loadNotes };
