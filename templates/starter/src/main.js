// The page: start the kit, then use the session. Vite bundles this file (npm run build).
import { createKit } from 'marketplace-app-kit';
import 'marketplace-app-kit/elements';

const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';

const kit = await createKit({
  backend: '/api/marketplace', // where server.js mounts createAppBackend
  hostOrigins: meta('mp-host-origins').split(' ').filter(Boolean), // the dashboard's origin
  planNames: JSON.parse(meta('mp-plan-names') || '{}'), // { pro_monthly: 'Pro', … }: the elements say "Pro"
});

const greeting = document.querySelector('#greeting');
if (kit.state === 'ready') {
  // kit.fetch adds the app session (Authorization: Bearer) and renews it when it runs out.
  const answer = await kit.fetch('/api/hello');
  greeting.textContent = answer.ok ? (await answer.json()).message : `The server answered ${answer.status}.`;
} else if (kit.state === 'error') {
  greeting.textContent = `Could not start: ${kit.error?.code}. Open the app from the marketplace dashboard.`;
} else {
  greeting.textContent = 'Open this app from the marketplace dashboard.';
}

document.querySelector('#export')?.addEventListener('click', async () => {
  const answer = await kit.fetch('/api/export.csv');
  if (!answer.ok) return void (greeting.textContent = `Export refused (${answer.status}).`);
  const link = Object.assign(document.createElement('a'), { href: URL.createObjectURL(await answer.blob()), download: 'export.csv' });
  link.click();
  URL.revokeObjectURL(link.href);
});
