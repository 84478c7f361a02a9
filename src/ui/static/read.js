// One poll: read what the emulator has (the control API first, the interfaces only where
// something changed) and draw every panel.
import { ApiFailure, api } from './api.js';
import { renderAlerts } from './alerts.js';
import { followClock, maybeReloadAnnotations, readAnnotationMarks, reloadAnnotations, renderDomainChoices } from './annotations.js';
import { readClock, renderClock } from './clock.js';
import { notifyOnce } from './dom.js';
import { renderFaults } from './faults.js';
import { journalQuery, renderJournal } from './journal.js';
import { model, onForget } from './model.js';
import { PATHS } from './paths.js';
import { readChangedResources, renderResources } from './resources.js';
import { readCompositions, renderCompositions } from './compositions.js';
import { maybeReadSandboxes } from './sandboxes.js';
import { followRum, renderRumChoices } from './rum.js';

const RETRY_MS = 10_000;
let catalogRetryAt = 0;

onForget(() => {
  model.catalogNeeded = true;
  catalogRetryAt = 0;
});

export async function poll() {
  const control = PATHS.control;
  const [, lifecycles, journal, faults, alerts, annotationMarks] = await Promise.all([
    readClock(),
    api('GET', `${control}/lifecycles`),
    api('GET', `${control}/journal`, { query: journalQuery() }),
    api('GET', `${control}/faults`),
    api('GET', `${control}/alerts`),
    // Annotations are read again only when the journal shows someone changed them.
    readAnnotationMarks(),
  ]);
  model.lifecycles = lifecycles;
  model.journal = journal;
  model.faults = faults;
  model.alerts = alerts;

  // A failed read of an interface (a fault rule may well hit this page too) is reported and
  // tried again later; the rest of the page goes on.
  const problems = [];
  const attempt = async (fn) => {
    try {
      await fn();
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      problems.push(err);
    }
  };
  if (model.catalogNeeded && performance.now() >= catalogRetryAt) {
    await attempt(async () => {
      try {
        await loadCatalog();
      } catch (err) {
        catalogRetryAt = performance.now() + RETRY_MS;
        throw err;
      }
    });
  }
  await attempt(readChangedResources);
  await attempt(readCompositions);
  await attempt(() => maybeReloadAnnotations(annotationMarks));
  await attempt(maybeReadSandboxes);
  await attempt(() => followRum());
  for (const problem of problems) notifyOnce(`could not read: ${problem.describe()}`);

  renderClock();
  renderResources();
  renderCompositions();
  renderAlerts();
  renderFaults();
  renderJournal();
  followClock();
}

/** Names of the grids, environments and RSDBs, from the Repository service, and the domains. */
async function loadCatalog() {
  const [grids, environments, rsdbs, domains] = await Promise.all(
    ['grid', 'testenvironment', 'rsdb', 'domain'].map((type) => api('GET', `${PATHS.repository}/Objects/${type}`)),
  );
  model.names.grid = new Map(grids.objects.map((o) => [o.id, o.name]));
  model.names.environment = new Map(environments.objects.map((o) => [o.id, o.name]));
  model.names.rsdb = new Map(rsdbs.objects.map((o) => [o.id, o.name]));
  model.domains = domains.objects;
  renderDomainChoices();
  renderRumChoices();
  model.catalogNeeded = false;
  await reloadAnnotations();
}
