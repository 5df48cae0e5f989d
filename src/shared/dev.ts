/**
 * True in the development build of the browser entries, false in their production build: the
 * package's exports map gives the production build (`dist/production/`) to a bundler that builds
 * for production (the `production` export condition: Vite and webpack set it), and this build to
 * everyone else (docs/runtime.md#development-and-production-builds). Long explanations are
 * written `DEV ? '…' : ''`, so that a production bundle drops them: a production error says its
 * code and where it is explained (`MarketplaceKitError`), as Lit's production build does with its
 * warnings.
 */
export const DEV: boolean = true;
