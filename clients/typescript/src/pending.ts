// Hand-written stand-ins for methods that the spec fixes but that have no schema file in
// protocol/ yet. The client merges these tables with the generated ones (`HostRequests`, ...):
// as soon as a method gets a `*.schema.json`, `npm run gen` adds it to the generated table and
// the generated type wins. Every SPEC 8 method has a schema today, so the tables are empty; add
// an entry here when the spec names a method before the sidecar has its schema.

/* eslint-disable @typescript-eslint/no-empty-interface */
export interface PendingHostRequests {}
export interface PendingSidecarNotifications {}
export interface PendingSidecarRequests {}
