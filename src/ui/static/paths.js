// Where everything lives, as the server says: its path prefixes and who may call what
// (GET paths.json beside this page, made from the table the server's own guards use).
import { areaIn } from './areas.js';

const settingsUrl = new URL('paths.json', import.meta.url);
const settings = await fetch(settingsUrl, { headers: { accept: 'application/json' } })
  .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`${response.status} ${response.statusText}`))))
  .catch((err) => {
    const live = document.querySelector('#live');
    if (live) {
      live.className = 'live down';
      live.textContent = 'cannot start';
    }
    console.warn(`the dashboard cannot read ${settingsUrl.pathname}: ${err.message}`);
    throw err;
  });

/** provisioning, repository, annotations, alerts, control, ui, ...: each a path such as "/_emulator". */
export const PATHS = settings.paths;

/**
 * The emulator's root: the page is served at <root><PATHS.ui>/, so a proxy that adds a path
 * prefix in front of the emulator keeps the page working.
 */
export const ROOT = new URL('../'.repeat(PATHS.ui.split('/').filter(Boolean).length), settingsUrl);

/** The URL of an emulator path ("/_emulator/clock"). */
export const urlOf = (path) => new URL(path.replace(/^\//, ''), ROOT);

const areaOf = (path) => areaIn(settings.areas, path);

/** Calls of the control API carry the admin token, once the page was given one. */
export const isControl = (path) => areaOf(path)?.access === 'admin';

/** Calls that carry the session token: those that need it, and the alert calls, which may. */
export const needsSession = (path) => ['token', 'alert'].includes(areaOf(path)?.access);
