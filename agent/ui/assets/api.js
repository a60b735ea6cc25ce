// The dashboard's one door to the agent: the same /v1 API the CLI uses,
// authenticated by the session cookie; writes carry the CSRF token.
const csrf = document.querySelector('meta[name="shoal-csrf"]').content;

export class HTTPError extends Error {
  constructor(status, msg) { super(msg); this.status = status; }
}

// get reads a JSON endpoint; onIndex, when given, hears the state's index
// the answer reflects (X-Shoal-Index), where the agent sends one.
export async function get(path, onIndex) {
  const r = await fetch(path, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  if (r.status === 401) { location.assign('/ui/login'); throw new HTTPError(401, 'logged out'); }
  if (!r.ok) throw new HTTPError(r.status, (await r.json().catch(() => ({}))).error || r.statusText);
  const idx = +r.headers.get('X-Shoal-Index');
  if (onIndex && idx > 0) onIndex(idx);
  return r.json();
}

export async function getText(path) {
  const r = await fetch(path, { credentials: 'same-origin' });
  if (!r.ok) throw new HTTPError(r.status, (await r.json().catch(() => ({}))).error || r.statusText);
  return r.text();
}

export async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Shoal-CSRF': csrf },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.ok) throw new HTTPError(r.status, (await r.json().catch(() => ({}))).error || r.statusText);
  return r.json().catch(() => ({}));
}

export async function logout() {
  await fetch('/ui/logout', { method: 'POST', credentials: 'same-origin', headers: { 'X-Shoal-CSRF': csrf } });
  location.assign('/ui/login');
}
