// The simulator's authorization page driven in Chromium: choose a user, Approve or Deny, land on
// the app's real callback on another loopback origin, and exchange the code with the server client.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMarketplaceClient } from '../../src/server/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { launchChromium, PHONE_320 } from '../support/browser.js';
import { authorizeUrl, startReceiver, startTestSimulator, type Receiver } from '../support/simulator-harness.js';

const VERIFIER = 'a-pkce-verifier-that-is-long-enough-0123456789abcdef';

let browser: Browser;
let sim: Simulator;
let callback: Receiver;

before(async () => {
  callback = await startReceiver((_request, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('callback reached'));
  sim = await startTestSimulator({ redirectUris: [callback.url], appName: 'Field Notes' });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await sim?.close();
  await callback?.close();
});

describe('simulator authorization page in Chromium', () => {
  it('Approve sends the chosen user back with a code and the state; the code exchanges with PKCE', async () => {
    const page = await browser.newPage();
    const challenge = createHash('sha256').update(VERIFIER).digest('base64url');
    await page.goto(authorizeUrl(sim, { redirectUri: callback.url, state: 'st-approve', codeChallenge: challenge }));
    assert.equal(await page.textContent('h1'), 'Authorize Field Notes');
    await page.getByRole('radio', { name: /Alan Turing/ }).check();
    await Promise.all([page.waitForURL((url) => url.href.startsWith(callback.url)), page.getByRole('button', { name: 'Approve' }).click()]);
    const landed = new URL(page.url());
    assert.equal(landed.searchParams.get('state'), 'st-approve');
    assert.equal(await page.textContent('body'), 'callback reached');
    assert.equal(callback.received[0]?.headers.referer, undefined, 'the authorization URL does not leak to the app');
    const code = landed.searchParams.get('code')!;
    const client = createMarketplaceClient({ siteUrl: sim.siteUrl, clientId: sim.clientId, clientSecret: sim.clientSecret });
    const tokens = await client.exchangeCode({ code, redirectUri: callback.url, codeVerifier: VERIFIER });
    assert.equal((await client.whoami({ accessToken: tokens.accessToken })).name, 'Alan Turing');

    await page.close();
  });

  it('Deny sends the user back with error=access_denied and the state, without a code', async () => {
    const page = await browser.newPage();
    await page.goto(authorizeUrl(sim, { redirectUri: callback.url, state: 'st-deny' }));
    await Promise.all([page.waitForURL((url) => url.href.startsWith(callback.url)), page.getByRole('button', { name: 'Deny' }).click()]);
    const landed = new URL(page.url());
    assert.equal(landed.searchParams.get('error'), 'access_denied');
    assert.equal(landed.searchParams.get('state'), 'st-deny');
    assert.equal(landed.searchParams.get('code'), null);
    await page.close();
  });

  it("keeps the users to choose from inside the card's padding on a 320 px phone", async () => {
    const context = await browser.newContext(PHONE_320);
    try {
      const page = await context.newPage();
      await page.goto(authorizeUrl(sim, { redirectUri: callback.url, state: 'st-narrow' }));
      const { right, ends } = await page.evaluate(() => {
        const card = document.querySelector('.card')!;
        const users = [...document.querySelectorAll('label.user')];
        return {
          right: card.getBoundingClientRect().right - parseFloat(getComputedStyle(card).paddingRight),
          // Each user's box, and the end of the text in it (which may overflow the box).
          ends: users.map((user) => ({
            user: user.querySelector('input')!.value,
            box: user.getBoundingClientRect().right,
            text: user.querySelector('span')!.getBoundingClientRect().right + parseFloat(getComputedStyle(user).paddingRight),
          })),
        };
      });
      assert.equal(ends.length, 5);
      for (const { user, box, text } of ends) {
        assert.ok(Math.max(box, text) <= right + 0.5, `${user}: its box ends at ${box} px and its text at ${text} px, the card's padding at ${right} px`);
      }
    } finally {
      await context.close();
    }
  });

  it('shows an error page, and stays on it, for an unregistered redirect URI', async () => {
    const page = await browser.newPage();
    const response = await page.goto(authorizeUrl(sim, { redirectUri: `${callback.url}/`, state: 's' }));
    assert.equal(response?.status(), 400);
    assert.equal(await page.textContent('h1'), 'Redirect URI not registered');
    assert.ok(page.url().startsWith(sim.siteUrl));
    await page.close();
  });
});
