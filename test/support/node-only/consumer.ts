// Imports the Node entries by package name (resolved to dist/ through the exports map), so that
// ./tsconfig.json type-checks every declaration file they reach.
import * as server from 'marketplace-app-kit/server';
import * as simulator from 'marketplace-app-kit/simulator';

export const entries = [server, simulator];
