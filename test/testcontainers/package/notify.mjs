// The code of a project that uses the service: when it deploys, it starts its load-test grid
// and marks the moment with an annotation. Its tests point it at the emulator.
export async function deployAndAnnotate({ baseUrl, token, gridId, title }) {
  const headers = { 'X-Auth-Token': token, 'Content-Type': 'application/json' };
  const start = await fetch(`${baseUrl}/concerto/services/rest/CloudService/v1/grid/${gridId}/action`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ action: 'start' }),
  });
  if (!start.ok) throw new Error(`grid start: ${start.status} ${await start.text()}`);
  const annotation = await fetch(`${baseUrl}/concerto/mpulse/api/annotations/v1`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ title, text: 'deployed by the pipeline', start: Date.now() }),
  });
  if (!annotation.ok) throw new Error(`annotation: ${annotation.status} ${await annotation.text()}`);
  return (await annotation.json()).id;
}
