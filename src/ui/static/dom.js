// Small DOM helpers, and the page's notes to the user (toasts).

export const $ = (selector, root = document) => root.querySelector(selector);

/** h('button', {class: 'x', onclick}, 'text', child): an element with properties and children. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false).map((c) => (c instanceof Node ? c : String(c))));
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
/** The same for SVG elements. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setProps(el, attrs);
  el.append(...children.flat().filter((c) => c !== null && c !== undefined).map((c) => (c instanceof Node ? c : String(c))));
  return el;
}

function setProps(el, props) {
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'class') el.setAttribute('class', value);
    else if (key in el && !(el instanceof SVGElement) && typeof value !== 'string') el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
}

export function button(label, onclick, props = {}) {
  return h('button', { type: 'button', ...props, onclick }, label);
}

/** "label value", or nothing when there is no value. */
export function fact(label, value) {
  return value === undefined || value === null || value === '' ? null : h('span', {}, `${label} `, h('b', {}, value));
}

/**
 * A field shows itself invalid (style.css: [data-touched]:invalid) only once the user typed
 * in it or tried to submit its form: an empty required field is no mistake before that.
 */
export function validateOnceTouched(root = document) {
  root.addEventListener('input', (event) => (event.target.dataset.touched = ''), true);
  // Fired on each invalid field when a submit is refused.
  root.addEventListener('invalid', (event) => (event.target.dataset.touched = ''), true);
  root.addEventListener('reset', (event) => {
    for (const field of event.target.querySelectorAll('[data-touched]')) delete field.dataset.touched;
  }, true);
}

const notified = new Map();
/** An error toast, unless the same one was shown a moment ago (a read repeats a failure). */
export function notifyOnce(text) {
  const now = performance.now();
  if (now - (notified.get(text) ?? -Infinity) < 20_000) return;
  notified.set(text, now);
  toast(text, 'error');
}

export function toast(text, kind = 'info') {
  // Also in the browser's console, where a developer (or a test) looks for what went wrong.
  if (kind === 'error') console.warn(text);
  const el = h('div', { class: `toast ${kind}` }, text);
  $('#toasts').append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 8000 : 3500);
}
