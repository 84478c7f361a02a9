// Alerts: one card each, to fire, clear, enable or disable it, with its history.
import { api } from './api.js';
import { $, button, fact, h } from './dom.js';
import { dateTime } from './format.js';
import { model, onForget } from './model.js';
import { PATHS } from './paths.js';
import { act } from './live.js';

const alertCards = new Map();
/** The colour of each delivery status, by the page's state families. */
const DELIVERY_FAMILY = { pending: 'progress', sent: 'ready', failed: 'failed', refused: 'failed', stored: 'terminated' };

onForget(() => {
  $('#alerts').replaceChildren();
  $('#deliveries').replaceChildren();
  alertCards.clear();
});

/** The latest deliveries of the outbox: when, which alert, channel and target, and what became of each. */
function renderDeliveries() {
  const list = $('#deliveries');
  const deliveries = model.deliveries ?? [];
  list.replaceChildren(
    ...(deliveries.length
      ? deliveries.map((d) => {
          const last = d.attempts[d.attempts.length - 1];
          const why = d.reason ?? last?.error ?? (last?.statusCode ? `answered ${last.statusCode}` : '');
          return h(
            'li',
            { dataset: { delivery: String(d.id), status: d.status } },
            h('time', { class: 'mono muted' }, dateTime(d.createdAt)),
            h('span', { class: `badge fam-${DELIVERY_FAMILY[d.status] ?? 'progress'}` }, d.status),
            h('span', {}, `${d.action} ${d.alert} → ${d.channel} `, h('b', {}, d.target)),
            why ? h('span', { class: 'muted small' }, ` ${why}`) : null,
            d.nextAttemptAt ? h('span', { class: 'muted small' }, ` next attempt ${dateTime(d.nextAttemptAt)}`) : null,
          );
        })
      : [h('li', { class: 'empty' }, 'no delivery yet: each fire and clear makes one per channel')]),
  );
}

export function renderAlerts() {
  renderDeliveries();
  const container = $('#alerts');
  if (model.alerts.length === 0) {
    container.replaceChildren(h('p', { class: 'empty' }, 'no alert is configured'));
    alertCards.clear();
    return;
  }
  container.querySelector('.empty')?.remove();
  for (const alert of model.alerts) {
    let card = alertCards.get(alert.uid);
    if (!card) {
      card = alertCard(alert.uid);
      alertCards.set(alert.uid, card);
      container.append(card.el);
    }
    card.update(alert);
  }
  for (const [uid, card] of alertCards) {
    if (!model.alerts.some((a) => a.uid === uid)) {
      card.el.remove();
      alertCards.delete(uid);
    }
  }
}

/** A rule's unit when it names none: the metric's own (rule-schemas.ts METRIC_UNITS). */
const ownUnit = (metric) => ({ Beacons: '', AppErrors: '', Sessions: '', ErrorsPerPage: 'perPage', BounceRate: 'percent' })[metric] ?? 'ms';
const withUnit = (value, unit) => (unit === 'percent' ? `${value}%` : unit === 'perPage' ? `${value} per page` : unit ? `${value} ${unit}` : String(value));

/**
 * A threshold rule in words, and where it stands: the value of the last minute evaluated,
 * and how many minutes of the window the condition has held.
 */
function ruleFacts(alert) {
  const r = alert.rule;
  if (!r) return [];
  const unit = r.unit ?? ownUnit(r.metric);
  const timer = ownUnit(r.metric) === 'ms';
  const what = timer ? `${(r.percentile ?? 50) === 50 ? 'median' : `p${r.percentile}`} ${r.metric}` : r.metric;
  const filters = Object.entries(r.filters ?? {}).map(([name, v]) => `${name}=${[v].flat().join(',')}`);
  const s = alert.ruleStatus;
  return [
    h(
      'span',
      { class: 'rule' },
      'rule ',
      h('b', {}, `${what} ${r.comparison} ${withUnit(r.threshold, unit)} for ${r.windowMinutes} min`),
      ` on ${r.app}${filters.length ? ` (${filters.join('; ')})` : ''}`,
    ),
    s
      ? h(
          'span',
          { class: 'rule-value' },
          'value ',
          h('b', { class: s.holding ? 'error' : '' }, s.value === null ? 'no data' : withUnit(s.value, unit)),
          ` at ${dateTime(s.evaluatedAt)}, ${s.holding ? 'holding' : `${s.breaching} of ${r.windowMinutes} min`}`,
        )
      : null,
  ];
}

function alertCard(uid) {
  const path = `${PATHS.alerts}/${encodeURIComponent(uid)}`;
  const title = h('h3');
  const state = h('span');
  const enabled = h('input', {
    type: 'checkbox',
    name: 'enabled',
    onchange: () =>
      act(
        () => api('PATCH', `${PATHS.control}/alerts/${encodeURIComponent(uid)}`, { body: { enabled: enabled.checked } }),
        (a) => `${a.name}: ${a.enabled ? 'enabled' : 'disabled'}`,
      ),
  });
  const message = h('input', { name: 'message', placeholder: 'message (empty: the default)', class: 'grow' });
  const fire = button('fire', () =>
    act(() => api('POST', `${path}/fire`, { body: message.value ? { message: message.value } : undefined }), 'alert fired'),
  { class: 'danger', name: 'fire' });
  const clear = button('clear', () => act(() => api('POST', `${path}/clear`), 'alert cleared'), { name: 'clear' });
  const channels = h('div', { class: 'meta' });
  const history = h('ol', { class: 'history', reversed: true });
  const historyBox = h('details', {}, h('summary', {}, 'history (newest first)'), history);
  let shownEvents = -1;
  const el = h(
    'article',
    { class: 'card', dataset: { alert: uid } },
    h('header', {}, title, state, h('label', { class: 'switch' }, enabled, 'enabled')),
    channels,
    h('div', { class: 'buttons' }, message, fire, clear),
    historyBox,
  );
  let last = '';
  return {
    el,
    update(alert) {
      const key = JSON.stringify(alert);
      if (key === last) return;
      last = key;
      const firing = alert.state === 'firing';
      el.className = `card fam-${!alert.enabled ? 'terminated' : firing ? 'failed' : 'ready'}`;
      title.replaceChildren(alert.name, ' ', h('small', { class: 'muted mono' }, alert.uid));
      state.replaceChildren(h('span', { class: `badge alert-state fam-${firing ? 'failed' : 'ready'}` }, firing ? 'FIRING' : 'CLEARED'));
      enabled.checked = alert.enabled;
      channels.replaceChildren(
        ...[
          alert.enabled ? null : h('span', { class: 'error' }, 'disabled: fire and clear answer 409'),
          ...ruleFacts(alert),
          ...alert.channels.map((c) => h('span', {}, `${c.type} `, h('b', {}, c.target))),
          fact('last fired', alert.lastTriggered ? dateTime(alert.lastTriggered) : undefined),
          fact('last cleared', alert.lastCleared ? dateTime(alert.lastCleared) : undefined),
        ].filter(Boolean),
      );
      const events = [...alert.history].reverse();
      if (shownEvents !== -1 && events.length > shownEvents) historyBox.open = true;
      shownEvents = events.length;
      history.replaceChildren(
        ...(events.length
          ? events.map((e) =>
              h(
                'li',
                {},
                h('time', { class: 'mono muted' }, dateTime(e.at)),
                h('span', { class: e.action }, e.action === 'fire' ? 'FIRE' : 'CLEAR'),
                e.by === 'rule' ? h('span', { class: 'muted' }, 'by the rule') : null,
                e.message ? h('span', { class: 'grow' }, e.message, e.subject ? h('span', { class: 'muted' }, ` — ${e.subject}`) : null) : null,
              ),
            )
          : [h('li', { class: 'empty' }, 'never fired')]),
      );
    },
  };
}
