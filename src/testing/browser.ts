/**
 * `marketplace-app-kit/testing` as a browser (or bundler) project sees it: `FakeKit` and its
 * sample data, for tests of pages and elements. In Node the same entry gives the signers and the
 * simulator helpers instead (`./index.ts`). Docs: docs/testing.md.
 */
export { FakeKit, sampleEntitlement, sampleUser, type UpgradeScript } from './fake-kit.js';
export { MarketplaceKitError, isKitError, type ErrorCode } from '../shared/errors.js';
