// The real-user chart: a domain's page load time and traffic over the last 24 hours, read from
// the Query API, with the domain's annotations and incidents on the same time axis.
import { api } from './api.js';
import { $, h, s } from './dom.js';
import { dateTime, hms, shortDate } from './format.js';
import { model } from './model.js';
import { PATHS } from './paths.js';

const DAY = 86_400_000;
/** The chart is read again at most this often (real ms), however fast the clock runs. */
const MIN_INTERVAL_MS = 5_000;

let apps = null;
let readAt = -Infinity;
let readFor = '';
let data = null;

/** The domains to choose from, as the catalogue lists them. */
export function renderRumChoices() {
  const select = $('#rum-domain');
  const chosen = select.value;
  select.replaceChildren(...model.domains.map((d) => h('option', { value: String(d.id) }, d.name)));
  // shop.example.com has a model and incidents in the demo seed: the chart worth seeing first.
  const fallback = model.domains.find((d) => d.name.startsWith('shop.')) ?? model.domains[0];
  select.value = model.domains.some((d) => String(d.id) === chosen) ? chosen : fallback ? String(fallback.id) : '';
}

async function read(domainId, now) {
  apps ??= await api('GET', `${PATHS.control}/apps`);
  const app = apps.find((a) => a.domainId === domainId);
  if (!app) return null;
  const [series, annotations, incidents] = await Promise.all([
    api('GET', `${PATHS.query}/${encodeURIComponent(app.apiKey)}/timers-metrics`, {
      query: { format: 'json', 'date-comparator': 'Last24Hours', metric: 'Beacons', timer: 'PageLoad' },
    }),
    api('GET', PATHS.annotations, { query: { domain: String(domainId), 'date-start': String(Math.floor(now - DAY)) } }),
    api('GET', `${PATHS.control}/incidents`),
  ]);
  const list = Array.isArray(annotations) ? annotations : (annotations?.annotations ?? []);
  return { now, series, annotations: list, incidents: incidents.filter((i) => i.domainId === domainId && i.end > now - DAY && i.start < now) };
}

/** A read put off by MIN_INTERVAL_MS, to be made when it has passed. */
let later = null;

/** Reads the chart again when the domain changed or the clock moved a minute, and draws it. */
export async function followRum(force = false) {
  const select = $('#rum-domain');
  if (!select || !select.value || !model.clock) return;
  const now = model.clock.now;
  const key = `${select.value}|${Math.floor(now / 60_000)}`;
  if (!force && key === readFor) return;
  const wait = MIN_INTERVAL_MS - (performance.now() - readAt);
  if (!force && wait > 0) {
    // Too soon: once, when the interval has passed (no event may come to ask again).
    later ??= setTimeout(() => {
      later = null;
      followRum().catch(() => undefined);
    }, wait);
    return;
  }
  readFor = key;
  readAt = performance.now();
  data = await read(Number(select.value), now);
  draw();
}

function draw() {
  const container = $('#rum-chart');
  if (!data) {
    container.replaceChildren(h('p', { class: 'empty' }, 'no data'));
    return;
  }
  const { now, series } = data;
  const beacons = series.values.find((v) => v.id === 'Beacons')?.history ?? [];
  const load = series.values.find((v) => v.id === 'PageLoad')?.history ?? [];
  const from = Math.floor((now - DAY) / 60_000) * 60_000;
  const to = now;
  const width = Math.max(320, container.clientWidth);
  const height = 200;
  const left = 44;
  const right = 44;
  const top = 36;
  const bottom = 22;
  const x = (t) => left + ((t - from) / (to - from)) * (width - left - right);
  const plotBottom = height - bottom;
  const maxLoad = Math.max(1000, ...load) * 1.1;
  const maxBeacons = Math.max(1, ...beacons) * 1.1;
  const yLoad = (v) => plotBottom - (v / maxLoad) * (plotBottom - top);
  const yBeacons = (v) => plotBottom - (v / maxBeacons) * (plotBottom - top);
  const at = (i) => from + i * 60_000;
  const traffic = beacons.length
    ? `M${x(at(0))} ${plotBottom} ${beacons.map((b, i) => `L${x(at(i))} ${yBeacons(b)}`).join(' ')} L${x(at(beacons.length - 1))} ${plotBottom} Z`
    : '';
  const line = load.map((v, i) => `${i ? 'L' : 'M'}${x(at(i))} ${yLoad(v)}`).join(' ');
  const ticks = [];
  for (let t = Math.ceil(from / (3 * 3_600_000)) * 3 * 3_600_000; t <= to; t += 3 * 3_600_000) {
    const label = new Date(t).getUTCHours() === 0 ? shortDate(t) : hms(t).slice(0, 5);
    ticks.push(s('g', { class: 'tick' }, s('line', { x1: x(t), x2: x(t), y1: top, y2: plotBottom }), s('text', { x: x(t) + 3, y: height - 6 }, label)));
  }
  const incidents = data.incidents.map((i) => {
    const x1 = x(Math.max(i.start, from));
    const x2 = x(Math.min(i.end, to));
    return s('rect', { class: 'incident', x: x1, y: top, width: Math.max(2, x2 - x1), height: plotBottom - top }, s('title', {}, `incident: ${i.title ?? i.id}\n${dateTime(i.start)} → ${dateTime(i.end)} UTC`));
  });
  const marks = data.annotations
    .filter((a) => a.start >= from && a.start <= to)
    .map((a) =>
      s(
        'g',
        { class: 'mark' },
        s('title', {}, `${a.title}\n${a.text}\n${dateTime(a.start)} UTC`),
        s('line', { x1: x(a.start), x2: x(a.start), y1: top - 2, y2: plotBottom }),
        s('text', { x: Math.min(x(a.start) + 3, width - 120), y: top - 4 }, a.title),
      ),
    );
  container.replaceChildren(
    s(
      'svg',
      { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `page load time and beacons per minute, ${dateTime(from)} to ${dateTime(to)} UTC` },
      ...ticks,
      ...incidents,
      s('path', { class: 'traffic', d: traffic }),
      s('path', { class: 'load', d: line }),
      s('text', { class: 'legend legend-load', x: 4, y: 12 }, `load time (median, max ${Math.round(maxLoad / 1.1)} ms)`),
      s('text', { class: 'legend legend-traffic', x: width - 4, y: 12, 'text-anchor': 'end' }, `beacons/min (max ${Math.round(maxBeacons / 1.1)})`),
      ...marks,
    ),
  );
}

export function wireRum() {
  $('#rum-domain').addEventListener('change', () => followRum(true));
}
