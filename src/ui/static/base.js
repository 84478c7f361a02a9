// Which world the page shows, from where it was loaded: the page at <root>/_emulator/ui/
// drives the default world; at <root>/sandbox/<name>/_emulator/ui/ it drives that sandbox.
// <root> is whatever a proxy put in front of the emulator (often just "/"). Kept apart from
// the page so that a test can check it without a browser.

/**
 * `folder`: the path of the folder the page was loaded from ("/sandbox/w1/_emulator/ui/").
 * `ui`: the page's own prefix ("/_emulator/ui"); `sandboxPrefix`: "/sandbox/"; `name`: the
 * rule a sandbox name follows. Returns the root every call of the page goes under, the root
 * of the default world (where sandboxes are managed), and the sandbox's name (null: default).
 */
export function pageBase(folder, ui, sandboxPrefix, name) {
  const tail = `${ui}/`;
  // Anything else (the page copied elsewhere): the folder's parents, as many as `ui` has segments.
  const root = folder.endsWith(tail)
    ? folder.slice(0, folder.length - tail.length + 1)
    : upFrom(folder, ui.split('/').filter(Boolean).length);
  const inner = sandboxPrefix.replace(/^\/+|\/+$/g, '');
  const parts = root.split('/');
  // root is "<outer>/sandbox/<name>/": parts end with [..., "sandbox", "<name>", ""].
  if (parts.length >= 4 && parts.at(-3) === inner && name.test(parts.at(-2))) {
    return { root, defaultRoot: `${parts.slice(0, -3).join('/')}/`, sandbox: parts.at(-2) };
  }
  return { root, defaultRoot: root, sandbox: null };
}

function upFrom(folder, levels) {
  const parts = folder.split('/').filter(Boolean);
  const kept = parts.slice(0, Math.max(0, parts.length - levels));
  return `/${kept.map((p) => `${p}/`).join('')}`;
}

/** The path of the page that drives `sandbox` (null: the default world), under `defaultRoot`. */
export function pagePath(defaultRoot, ui, sandboxPrefix, sandbox) {
  const inner = sandboxPrefix.replace(/^\/+|\/+$/g, '');
  return `${defaultRoot}${sandbox === null ? '' : `${inner}/${sandbox}/`}${ui.replace(/^\/+/, '')}/`;
}

/**
 * Why `text` cannot name a new sandbox, or undefined when it can. "default" is refused here
 * although the server takes it: in the picker it would read like the default world.
 */
export function sandboxNameProblem(text, name, rule) {
  if (text === '') return 'give the new sandbox a name';
  if (!name.test(text)) return `'${text.length > 70 ? `${text.slice(0, 70)}…` : text}' is not a sandbox name: use ${rule}`;
  if (text === 'default') return "'default' is what the picker calls the world without a sandbox: choose another name";
  return undefined;
}
