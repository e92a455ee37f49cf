import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeCheck, progressText } from '../js/updates.js';

test('a check reads as a sentence: off, up to date, or the version found with its notes', () => {
  assert.deepEqual(describeCheck({ status: 'off', why: 'No update feed is configured.' }),
    { status: 'No update feed is configured.', found: null });
  assert.equal(describeCheck({ status: 'up_to_date', current: '0.1.0', latest: '0.1.0' }).status,
    'Sandalyst 0.1.0 is up to date.');
  assert.equal(describeCheck({ status: 'up_to_date', current: '0.2.0', latest: '0.1.0' }).status,
    'Sandalyst 0.2.0 is up to date (the newest published is 0.1.0).');
  const v = describeCheck({ status: 'available', current: '0.1.0', version: '0.2.0', notes: 'Faster.', date: '2026-12-08T00:00:00Z' });
  assert.equal(v.status, 'Sandalyst 0.2.0 is available; you have 0.1.0.');
  assert.deepEqual(v.found, { version: '0.2.0', heading: "What's new in 0.2.0", notes: 'Faster.', date: '2026-12-08' });
  assert.equal(describeCheck({ status: 'available', current: '0.1.0', version: '0.2.0', notes: null }).found.notes, 'No release notes.');
});

test('download progress in megabytes, with the whole when known', () => {
  assert.equal(progressText({ downloaded: 1048576, total: 4194304 }), 'Downloading… 1.0 of 4.0 MB');
  assert.equal(progressText({ downloaded: 524288, total: null }), 'Downloading… 0.5 MB');
});
