// Where everything lives, as the server says: its path prefixes and who may call what
// (GET paths.json beside this page, made from the table the server's own guards use); and
// which world this page drives, from where it was loaded (base.js).
import { areaIn } from './areas.js';
import { pageBase, pagePath } from './base.js';

// The folder the page was loaded from: relative, so that the settings come from the same
// world and through the same proxy as the page.
const folder = new URL('./', location.href);
const settingsUrl = new URL('paths.json', folder);
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

/** The repository's object types, as the Objects calls know them. */
export const OBJECT_TYPES = settings.objectTypes ?? [];
/** The state families ({failed, terminated}) and the states in which terminating is a no-op (noTeardown), from the server's constants. */
export const STATES = settings.states;

/** Composition instances: the states each command is accepted in (acceptedIn), and the colour families of their states (families). */
export const INSTANCES = settings.instances;

/** The demo the fixtures describe ({title, subtitle?}), for the presenter view; null when they name none. */
export const DEMO = settings.demo ?? null;

/** The emulated interfaces, in the server's order: each {name, prefix, label}. */
export const INTERFACES = settings.interfaces;

/** The prefix sandboxes live under ("/sandbox/"), the rule their names follow, and that rule in words. */
export const SANDBOXES = { prefix: settings.sandboxes.prefix, name: new RegExp(settings.sandboxes.name), rule: settings.sandboxes.rule };

const base = pageBase(folder.pathname, PATHS.ui, SANDBOXES.prefix, SANDBOXES.name);

/** The sandbox this page drives; null for the default world. */
export const SANDBOX = base.sandbox;

/** The root every call of the page goes under: "/" (or a proxy's prefix), or ".../sandbox/<name>/". */
export const ROOT = new URL(base.root, folder);

/** The default world's root, where sandboxes are listed, created and deleted. */
const DEFAULT_ROOT = new URL(base.defaultRoot, folder);

/** The URL of an emulator path ("/_emulator/clock") in this page's world. */
export const urlOf = (path) => new URL(path.replace(/^\//, ''), ROOT);

/** The URL of an emulator path in the default world, whichever world the page drives. */
export const defaultUrlOf = (path) => new URL(path.replace(/^\//, ''), DEFAULT_ROOT);

/** The URL of the page that drives `sandbox` (null: the default world). */
export const pageUrlOf = (sandbox) => new URL(pagePath(base.defaultRoot, PATHS.ui, SANDBOXES.prefix, sandbox), folder);

const areaOf = (path) => areaIn(settings.areas, path);

/** Calls of the control API carry the admin token, once the page was given one. */
export const isControl = (path) => areaOf(path)?.access === 'admin';

/** Calls that carry the session token: those that need it, and the alert calls, which may. */
export const needsSession = (path) => ['token', 'alert'].includes(areaOf(path)?.access);
