import { it } from 'vitest';
import { makeDemoApp } from '../helpers/app.js';

it('smoke', async () => {
  const { app } = await makeDemoApp();
  const key = 'EXMPL-WWW7X-K4R2Q-N8TBD-ZC5HV';
  for (const t of ['summary', 'histogram?series-format=json', 'by-minute?date-comparator=LastHour', 'timers-metrics?date-comparator=LastHour', 'page-groups', 'browsers', 'geography', 'ab-tests', 'bandwidth', 'metrics-by-dimension?dimension=browser', 'dimension-values?dimension=country', 'sessions-per-page-load-time', 'metric-per-page-load-time', 'dimension-over-time', 'nope', 'summary?date-comparator=Last30Days']) {
    const t0 = performance.now();
    const r = await app.inject({ url: `/concerto/mpulse/api/v2/${key}/${t}`, headers: { authentication: 'demo-token' } });
    console.log(t, r.statusCode, (performance.now() - t0).toFixed(1), r.body.slice(0, 300));
  }
  const t0 = performance.now();
  const r = await app.inject({ url: `/concerto/mpulse/api/v2/${key}/summary?date-comparator=Last30Days`, headers: { authentication: 'demo-token' } });
  console.log('warm', (performance.now() - t0).toFixed(1), r.body);
});
