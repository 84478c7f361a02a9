// The presenter view (?presenter, or the presenter button): for showing a demo on a projector.
// Larger type, the demo's own title from the fixtures, and only what the audience needs: the
// reset, export and import buttons, the sandbox controls, the scenario controls of each card
// (outcome, settle, fail), and the fault and journal panels are hidden (elements marked
// data-admin, and those the cards mark so).
import { $ } from './dom.js';
import { DEMO } from './paths.js';

const PARAM = 'presenter';
/** The tab's title outside the presenter view (sandboxes.js sets it first). */
let plainTitle = '';

export const presenting = () => document.documentElement.classList.contains('presenter');

function show(on) {
  document.documentElement.classList.toggle('presenter', on);
  $('#presenter-toggle').textContent = on ? 'leave presenter view' : 'presenter view';
  $('#presenter-toggle').setAttribute('aria-pressed', String(on));
  const title = DEMO?.title;
  $('#brand-title').textContent = on && title ? title : 'cloud-emulator';
  document.title = on && title ? title : plainTitle;
  const subtitle = $('#brand-subtitle');
  subtitle.textContent = on && DEMO?.subtitle ? DEMO.subtitle : '';
  subtitle.hidden = subtitle.textContent === '';
}

export function wirePresenter() {
  plainTitle = document.title;
  const url = new URL(location.href);
  // "?presenter", "?presenter=1" or "=true": on; "=0" or "=false": off.
  const given = url.searchParams.get(PARAM);
  show(given !== null && !['0', 'false'].includes(given));
  $('#presenter-toggle').addEventListener('click', () => {
    const on = !presenting();
    show(on);
    // Kept in the address, so that a reload (or the link, shared) keeps the view.
    const next = new URL(location.href);
    if (on) next.searchParams.set(PARAM, '');
    else next.searchParams.delete(PARAM);
    history.replaceState(null, '', next.href.replace(/([?&]presenter)=(?=&|$)/, '$1'));
  });
}
