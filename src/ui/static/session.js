// The top bar's right side: who the page signs in as; reset, export and import of the state.
import { api, askCredentials, forgetSession, signIn } from './api.js';
import { $, h, toast } from './dom.js';
import { emulatedNow, forgetEverything } from './model.js';
import { PATHS } from './paths.js';
import { act, refreshSoon } from './live.js';

export function wireSession() {
  $('#reset').addEventListener('click', () => {
    if (!confirm('Reset the emulator to its seed? Every change, token, fault rule and journal entry goes.')) return;
    act(async () => {
      const result = await api('POST', `${PATHS.control}/reset`);
      forgetEverything();
      // The reset dropped this page's session token; sign in again before reading.
      forgetSession();
      await signIn();
      return result;
    }, 'reset to the seed');
  });
  $('#export').addEventListener('click', () =>
    act(async () => {
      const state = await api('GET', `${PATHS.control}/state`);
      const blob = new Blob([`${JSON.stringify(state, null, 2)}\n`], { type: 'application/json' });
      const link = h('a', { href: URL.createObjectURL(blob), download: `emulator-state-${new Date(Math.floor(emulatedNow())).toISOString().replace(/[:.]/g, '-')}.json` });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    }, 'state exported'),
  );
  $('#import').addEventListener('change', async (event) => {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    let state;
    try {
      state = JSON.parse(await file.text());
    } catch (err) {
      toast(`${file.name} is not JSON: ${err.message}`, 'error');
      return;
    }
    act(async () => {
      const result = await api('PUT', `${PATHS.control}/state`, { body: state });
      forgetEverything();
      forgetSession();
      await signIn();
      return result;
    }, (r) => `imported ${file.name}: ${Object.entries(r.counts).filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(', ')}`);
  });
  $('#who').addEventListener('click', async () => {
    if (await askCredentials('', { cancellable: true })) {
      forgetEverything();
      refreshSoon();
    }
  });
}
