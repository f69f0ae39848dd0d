/**
 * The long hand-written transcripts of test/fixtures, with the time each was recorded (the
 * reference for relative dates) and the facts a correct conversion must contain.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ActionItem } from '../../src/index';

export interface Fixture {
  name: string;
  text: string;
  /** When it was recorded: "by Friday" is read against this. */
  recordedAt: Date;
  /** Every action item, in order, as the local engine must find it. */
  actions: ActionItem[];
  /** Speaker labels (diarised transcripts only). */
  attendees: string[];
  /** Other people it names. */
  mentioned: string[];
  /** Words of each decision it records. */
  decisions: string[];
}

const read = (file: string) => fs.readFileSync(path.join(__dirname, '..', 'fixtures', file), 'utf8');

/** A weekly product sync, diarised ("Priya: …"), recorded Tuesday 13 January 2026. */
export const PRODUCT_SYNC: Fixture = {
  name: 'product-sync',
  text: read('product-sync.txt'),
  recordedAt: new Date('2026-01-13T10:00:00Z'),
  actions: [
    { owner: 'Dana', task: 'Send the updated invite mocks to Marco', due: '2026-01-16' },
    { owner: 'Aisha', task: 'Put together a one-page summary of the beta metrics', due: '2026-01-14' },
    { owner: 'Marco', task: 'Merge the sync fix', due: '2026-01-15' },
    { owner: 'Tom', task: 'Email the affected beta teams once the migration is done', due: '2026-01-20' },
    { owner: 'Marco', task: 'Write the shared index design doc', due: '2026-01-31' },
    { owner: 'Tom', task: 'Collect the audit log requests in one document', due: '2026-01-23' },
    { owner: 'Aisha', task: 'Report whatever data we have', due: '2026-01-23' },
    { owner: 'Priya', task: 'Update the launch checklist', due: '2026-01-14' },
    { owner: 'Team', task: 'Decide who is on call during launch week', due: '' },
  ],
  attendees: ['Priya', 'Marco', 'Dana', 'Aisha', 'Tom'],
  mentioned: ['Lena'],
  decisions: ['go with the cache for the launch', 'keep the launch on the 27th'],
};

/** A founder's voice memo after a customer call, undiarised, recorded Wednesday 4 February 2026. */
export const CUSTOMER_DEBRIEF: Fixture = {
  name: 'customer-debrief',
  text: read('customer-debrief.txt'),
  recordedAt: new Date('2026-02-04T16:00:00Z'),
  actions: [
    { owner: 'Jonas', task: 'Test single sign-on against an Azure test tenant', due: '2026-02-11' },
    { owner: 'Speaker', task: 'Send Grace the pilot proposal with the timeline and the security answers', due: '2026-02-06' },
    { owner: 'Mei', task: 'Approve the discount before the proposal goes out', due: '' },
    { owner: 'Speaker', task: 'Find out the offline queue limit from the mobile team', due: '2026-02-05' },
    { owner: 'Samuel Ortiz', task: 'Send us their full security questionnaire', due: '2026-02-09' },
    { owner: 'Team', task: 'Write up the audit log requirement as a proper spec', due: '' },
    { owner: 'Speaker', task: 'Talk to Priya about putting it on the roadmap for next quarter', due: '' },
  ],
  attendees: [],
  mentioned: ['Grace Liu', 'Samuel Ortiz', 'Jonas', 'Tom', 'Mei', 'Priya'],
  decisions: [],
};

/** A post-incident review recorded on a phone (several voices, no labels), Monday 9 March 2026. */
export const INCIDENT_REVIEW: Fixture = {
  name: 'incident-review',
  text: read('incident-review.txt'),
  recordedAt: new Date('2026-03-09T14:00:00Z'),
  actions: [
    { owner: 'Chloe', task: 'Add an alert on worker restarts', due: '2026-03-13' },
    { owner: 'Ben', task: 'Add schema validation for the worker config', due: '2026-03-18' },
    { owner: 'Speaker', task: 'Add a check in CI', due: '' },
    { owner: 'Ravi', task: 'Write the design for retry backoff', due: '2026-03-20' },
    { owner: 'Team', task: 'Check the status of all the action items at the platform sync', due: '2026-03-23' },
    { owner: 'Nadia', task: 'Update the export service runbook', due: '2026-03-20' },
    { owner: 'Speaker', task: 'Send the customer-facing incident report to the account managers', due: '2026-03-10' },
    { owner: 'Team', task: 'Split config changes from schema migrations in our pull request template', due: '' },
    { owner: 'Speaker', task: 'Update the pull request template', due: '' },
  ],
  attendees: [],
  mentioned: ['Nadia', 'Ravi', 'Chloe', 'Ben'],
  decisions: ['retries need exponential backoff with jitter'],
};

export const FIXTURES: readonly Fixture[] = [PRODUCT_SYNC, CUSTOMER_DEBRIEF, INCIDENT_REVIEW];
